import assert from 'node:assert/strict';
import { test } from 'node:test';
import { micros, startTestGateway } from './helpers/gateway.ts';

/** A PCM WAV whose header says `seconds` at `byteRate` bytes per second. */
function wav(seconds: number, byteRate: number): Buffer {
  const data = Buffer.alloc(seconds * byteRate, 1);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(byteRate / 2, 24);
  header.writeUInt32LE(byteRate, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

test('an asynchronous transcription is charged on the file, then corrected to the duration the vendor reports', async () => {
  const gw = await startTestGateway();
  try {
    const { key, userId } = await gw.fundedKey({ balance: '1.00' });
    // The header says 2 s (48,000 bytes a second); the simulator reports ceil(96,044 / 16,000) = 7 s.
    const form = new FormData();
    form.set('model', 'whisper-1');
    form.set('async', 'true');
    form.set('file', new Blob([new Uint8Array(wav(2, 48_000))], { type: 'audio/wav' }), 'speech.wav');
    const created = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: key }, body: form });
    assert.equal(created.status, 200);
    const task = (await created.json()) as { id: string; cost: number };
    // whisper-1: 0.006 per minute → 2 s = 0.0002
    assert.equal(micros(task.cost), 200n);
    assert.equal(micros(await gw.balance({ userId })), micros('1.00') - 200n);

    await gw.app.services.runner.runDue();
    const done = (await (await fetch(`${gw.url}/media/tasks/${task.id}`, { headers: { authorization: key } })).json()) as { status: string; cost: number };
    assert.equal(done.status, 'done');
    // 7 s = 0.0007: the task shows what it finally cost, and the balance lost exactly that.
    assert.equal(micros(done.cost), 700n);
    assert.equal(micros(await gw.balance({ userId })), micros('1.00') - 700n);
    const ledger = (await gw.admin<{ data: Array<{ amount: string; kind: string; requestId: string | null }> }>('GET', `/ledger?userId=${userId}`)).body.data;
    const ofTask = ledger.filter((entry) => entry.kind === 'charge');
    assert.deepEqual(ofTask.map((entry) => entry.amount).sort(), ['-0.0002', '-0.0005']);
    assert.ok(ofTask.some((entry) => entry.requestId === task.id), 'the correction names the task');
  } finally {
    await gw.close();
  }
});
