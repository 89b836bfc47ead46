import { sql, type RawBuilder } from 'kysely';

/** Reads a money column exactly on both engines: as decimal integer text, then BigInt. */
export const moneyText = (column: string): RawBuilder<string> => sql<string>`cast(${sql.ref(column)} as text)`;

/** The same for a nullable money column. */
export const moneyTextOrNull = (column: string): RawBuilder<string | null> => sql<string | null>`cast(${sql.ref(column)} as text)`;
