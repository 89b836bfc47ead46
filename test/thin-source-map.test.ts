import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { buildSync } from 'esbuild';
import { thinSourceMap, type SourceMapV3 } from '../bin/thin-source-map.mjs';

interface Entry {
  originalSource?: string;
  originalLine?: number;
}

/** A small bundle of three files, whitespace-minified as npm run build makes the gateway's, with its esbuild source map. */
function bundleWithMap(): { code: string; map: SourceMapV3 } {
  const folder = mkdtempSync(join(tmpdir(), 'tollgate-map-'));
  try {
    writeFileSync(join(folder, 'money.ts'), 'export function cents(amount: number): string {\n  const whole = Math.trunc(amount);\n  return `${whole}.${String(Math.round((amount - whole) * 100)).padStart(2, "0")}`;\n}\n');
    writeFileSync(join(folder, 'greet.ts'), 'export class Greeter {\n  constructor(private readonly name: string) {}\n  greet(times: number): string[] {\n    const lines: string[] = [];\n    for (let i = 0; i < times; i++) lines.push(`hello ${this.name} ${i}`);\n    return lines;\n  }\n}\n');
    writeFileSync(join(folder, 'main.ts'), 'import { cents } from "./money.ts";\nimport { Greeter } from "./greet.ts";\n\nconst greeter = new Greeter("ada");\nif (greeter.greet(2).length !== 2) throw new Error("two");\nconsole.log(cents(12.5), greeter.greet(1)[0]);\n');
    const result = buildSync({ entryPoints: [join(folder, 'main.ts')], bundle: true, format: 'esm', platform: 'node', sourcemap: 'external', sourcesContent: false, minifyWhitespace: true, write: false, outfile: join(folder, 'out.js') });
    const text = (suffix: string): string => result.outputFiles.find((file) => file.path.endsWith(suffix))!.text;
    return { code: text('out.js'), map: JSON.parse(text('out.js.map')) as SourceMapV3 };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const segments = (map: SourceMapV3): number => map.mappings.split(/[;,]/).filter((segment) => segment !== '').length;

describe('bin/thin-source-map.mjs (npm run build thins the bundle source map)', () => {
  test('every position of the bundle maps to the same source file and line as before, with fewer mappings and no names', () => {
    const { code, map } = bundleWithMap();
    const thin = thinSourceMap(map);
    const before = new SourceMap(map as never);
    const after = new SourceMap(thin as never);
    let compared = 0;
    code.split('\n').forEach((line, lineNumber) => {
      for (let column = 0; column <= line.length; column++) {
        const was = before.findEntry(lineNumber, column) as Entry;
        const is = after.findEntry(lineNumber, column) as Entry;
        assert.equal(is.originalSource, was.originalSource, `line ${lineNumber} column ${column}`);
        assert.equal(is.originalLine, was.originalLine, `line ${lineNumber} column ${column}`);
        if (was.originalSource !== undefined) compared++;
      }
    });
    assert.ok(compared > 100, `compared ${compared} mapped positions`);
    assert.ok(segments(thin) < segments(map), `${segments(thin)} mappings against ${segments(map)}`);
    assert.deepEqual(thin.names, []);
    assert.deepEqual(thin.sources, map.sources);
    assert.equal(thin.version, 3);
  });

  test('a map already thinned is unchanged, and a map that is not version 3 or has a bad digit is refused', () => {
    const thin = thinSourceMap(bundleWithMap().map);
    assert.deepEqual(thinSourceMap(thin), thin);
    assert.throws(() => thinSourceMap({ version: 2, sources: [], mappings: '' }), /version 3/);
    assert.throws(() => thinSourceMap({ version: 3, sources: ['a.ts'], mappings: 'AA!A' }), /not a base64 VLQ digit/);
  });
});
