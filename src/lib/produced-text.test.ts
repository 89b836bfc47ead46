import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ProducedText } from './produced-text.ts';

const execNode = promisify(execFile);

test('the text is every piece in order, across flattenings, whatever the pieces', () => {
  const produced = new ProducedText();
  const pieces: string[] = [];
  for (let index = 0; index < 5_000; index++) {
    const piece = index % 7 === 0 ? '' : index % 5 === 0 ? `Grüße ${index} 🙂 ` : `w${index}`;
    pieces.push(piece);
    produced.add(piece);
    if (index % 997 === 0) assert.equal(produced.text, pieces.join(''));
  }
  assert.equal(produced.text, pieces.join(''));
  assert.equal(new ProducedText().text, '');
});

test('a stream keeps its text, not the frames its deltas were cut from', { timeout: 30_000 }, async () => {
  // In a child process with --expose-gc: 1,000 streams of 160 deltas of 20 characters, each delta a slice of its own
  // ~330-character frame (as a scanned delta is); the heap each stream keeps after a full collection, appended with
  // ProducedText and with plain `+=`.
  const child = `
    import { ProducedText } from ${JSON.stringify(new URL('./produced-text.ts', import.meta.url).href)};
    const keptPerStream = (append) => {
      gc();
      const before = process.memoryUsage().heapUsed;
      const streams = [];
      for (let stream = 0; stream < 1000; stream++) {
        const state = append.start();
        for (let chunk = 0; chunk < 160; chunk++) {
          const frame = '{"id":"chatcmpl-' + stream + '","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o",' +
            '"choices":[{"index":0,"delta":{"content":"' + (chunk + ' abcdefghijklmnopqrstuvwxyz').slice(0, 20) + '"},"logprobs":null,' +
            '"finish_reason":null}],"usage":null,"system_fingerprint":"fp_' + chunk + '","padding":"' + 'x'.repeat(80) + '"}';
          const start = frame.indexOf('"content":"') + 11;
          append.add(state, frame.slice(start, start + 20));
        }
        streams.push(state);
      }
      gc();
      const kept = (process.memoryUsage().heapUsed - before) / streams.length;
      if (append.text(streams[999]).length !== 3200) throw new Error('wrong text');
      return kept;
    };
    const withProducedText = keptPerStream({ start: () => new ProducedText(), add: (state, piece) => state.add(piece), text: (state) => state.text });
    const withConcatenation = keptPerStream({ start: () => ({ text: '' }), add: (state, piece) => { state.text += piece; }, text: (state) => state.text });
    console.log(JSON.stringify({ withProducedText, withConcatenation }));`;
  const { stdout } = await execNode(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', child]);
  const { withProducedText, withConcatenation } = JSON.parse(stdout) as Record<string, number>;
  const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;
  const figures = `a stream keeps ${kb(withProducedText!)} with ProducedText, ${kb(withConcatenation!)} with +=, for 3.2 KB of text`;
  assert.ok(withConcatenation! > 40 * 1024, `+= keeps the frames (what this test guards against): ${figures}`);
  assert.ok(withProducedText! < 10 * 1024, `ProducedText keeps the text and a few pieces: ${figures}`);
});
