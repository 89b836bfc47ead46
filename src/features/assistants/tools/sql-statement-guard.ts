/**
 * Statements that reach other files or change how the connection behaves. ATTACH opens (and creates) any file,
 * VACUUM INTO writes one, PRAGMA could lift the size limit, load_extension loads native code (never enabled anyway),
 * fts3_tokenizer with one argument reads a native pointer. The read-only `pragma_*` table-valued functions stay
 * available: they are other words.
 */
const REFUSED_LEADING = new Set(['ATTACH', 'DETACH', 'PRAGMA', 'VACUUM']);
const REFUSED_ANYWHERE = new Set([...REFUSED_LEADING, 'LOAD_EXTENSION', 'FTS3_TOKENIZER']);

/** Characters SQLite reads as part of an identifier or keyword (every code unit ≥ 0x80 included). */
const isWordCharacter = (code: number): boolean =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || code === 36 || code >= 0x80;

/**
 * The words of a statement outside string literals and comments, upper-cased, in order. Tokenized as SQLite does:
 * '…' (with '' inside) is a literal, `--` runs to the end of the line, a block comment to its close or the end. Quoted identifiers
 * ("…", `…`, […]) are scanned like bare words, because SQLite also resolves a quoted name as a function or keyword.
 */
export function statementWords(sql: string): string[] {
  const words: string[] = [];
  let index = 0;
  while (index < sql.length) {
    const code = sql.charCodeAt(index);
    if (code === 39 /* ' */) {
      index += 1;
      while (index < sql.length) {
        if (sql.charCodeAt(index) === 39) {
          if (sql.charCodeAt(index + 1) === 39) index += 2;
          else break;
        } else index += 1;
      }
      index += 1;
    } else if (sql.startsWith('--', index)) {
      const end = sql.indexOf('\n', index);
      index = end === -1 ? sql.length : end + 1;
    } else if (sql.startsWith('/*', index)) {
      const end = sql.indexOf('*/', index + 2);
      index = end === -1 ? sql.length : end + 2;
    } else if (isWordCharacter(code)) {
      const start = index;
      while (index < sql.length && isWordCharacter(sql.charCodeAt(index))) index += 1;
      words.push(sql.slice(start, index).toUpperCase());
    } else {
      index += 1;
    }
  }
  return words;
}

/** Why the SQL store refuses a statement, or undefined when it may run. */
export function refuseStatement(sql: string): string | undefined {
  const words = statementWords(sql);
  const leading = words[0];
  if (leading === undefined) return 'the statement is empty';
  if (REFUSED_LEADING.has(leading)) return `${leading} statements are not allowed in the SQL store`;
  const refused = words.find((word) => REFUSED_ANYWHERE.has(word));
  if (refused) return `${refused} is not allowed in the SQL store`;
  return undefined;
}
