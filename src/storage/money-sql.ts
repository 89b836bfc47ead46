import { sql, type RawBuilder } from 'kysely';

/** Reads a money column exactly on both engines: as decimal integer text, then BigInt. */
export const moneyText = (column: string): RawBuilder<string> => sql<string>`cast(${sql.ref(column)} as text)`;
