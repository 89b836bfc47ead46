import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Task } from '../features/tasks/task.ts';
import { newId } from '../lib/ids.ts';
import { SqlAccountsRepository } from './accounts-repository.ts';
import { openStorage } from './database.ts';
import { SqlJobsRepository } from './jobs-repository.ts';
import { SqlLedgerRepository } from './ledger-repository.ts';
import { SqlTasksRepository } from './tasks-repository.ts';

describe('tasks repository: only allowed status transitions are written', async () => {
  const storage = await openStorage('sqlite::memory:');
  after(() => storage.close());
  const ledger = new SqlLedgerRepository(storage.db);
  const tasks = new SqlTasksRepository(storage.db, ledger, new SqlJobsRepository(storage.db, 'sqlite'));
  const userId = newId('user');
  await new SqlAccountsRepository(storage.db).createUser({ id: userId, name: 'payer' }, 0);

  async function newTask(): Promise<Task> {
    const task: Task = {
      id: newId('task'), kind: 'media', type: 'generate', parentId: null, userId, keyId: 'key_x', payer: { type: 'user', id: userId },
      model: 'sora-2', servedModel: 'sora-2', status: 'idle', percent: 0, input: {}, result: null, error: null, cost: 400_000_000n,
      webhookUrl: null, webhookSecret: null, createdAt: 0, updatedAt: 0,
    };
    await tasks.createWithCharge(task, { id: newId('ledger'), account: task.payer, amount: -task.cost, kind: 'charge', requestId: task.id, model: task.model, description: 'task', createdAt: 0 }, 0);
    return task;
  }
  const refundOf = (task: Task) => ({ id: newId('ledger'), account: task.payer, amount: task.cost, kind: 'refund' as const, requestId: task.id, model: task.model, description: 'refund', createdAt: 1 });
  const refunds = async (task: Task): Promise<number> =>
    (await storage.db.selectFrom('ledger').select('id').where('request_id', '=', task.id).where('kind', '=', 'refund').execute()).length;

  test('a done task never goes back to processing, nor to failed', async () => {
    const task = await newTask();
    assert.equal(await tasks.update(task.id, { status: 'processing' }, 1), true);
    assert.equal(await tasks.settle(task.id, { status: 'done', percent: 100 }, {}, 2), true);
    assert.equal(await tasks.update(task.id, { status: 'processing', percent: 10 }, 3), false);
    assert.equal(await tasks.settle(task.id, { status: 'failed' }, { refund: refundOf(task) }, 4), false);
    const stored = await tasks.get(task.id);
    assert.equal(stored?.status, 'done');
    assert.equal(stored?.percent, 100);
    assert.equal(await refunds(task), 0, 'a done task is not refunded');
  });

  test('a failed task is settled once: a second failure writes no second refund', async () => {
    const task = await newTask();
    assert.equal(await tasks.settle(task.id, { status: 'failed' }, { refund: refundOf(task) }, 1), true, 'idle → failed');
    assert.equal(await tasks.settle(task.id, { status: 'failed' }, { refund: refundOf(task) }, 2), false);
    assert.equal(await refunds(task), 1);
    const user = await new SqlAccountsRepository(storage.db).getUser(userId);
    const sum = await storage.db.selectFrom('ledger').select((eb) => eb.fn.sum<string>('amount_nano').as('sum')).where('account_id', '=', userId).executeTakeFirstOrThrow();
    assert.equal(user?.balance, BigInt(sum.sum), 'balance = Σ ledger');
  });
});
