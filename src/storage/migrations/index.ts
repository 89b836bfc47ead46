import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001-initial.ts';
import * as tasksJobs from './0002-tasks-jobs.ts';
import * as assistants from './0003-assistants.ts';
import * as chatbot from './0005-chatbot.ts';
import * as keyRateLimit from './0006-key-rate-limit.ts';
import * as jobQueues from './0007-job-queues.ts';
import * as changes from './0008-changes.ts';
import * as balanceLeases from './0009-balance-leases.ts';
import * as idempotencyKeys from './0010-idempotency-keys.ts';
import * as modelOperatorFields from './0012-model-operator-fields.ts';
import * as signIn from './0013-sign-in.ts';
import * as ledgerKeyAudit from './0014-ledger-key-audit.ts';
import * as keyManagement from './0015-key-management.ts';
import * as orgsInvitationsBots from './0017-orgs-invitations-bots.ts';
import * as requestLog from './0016-request-log.ts';
import * as vouchers from './0018-vouchers.ts';
import * as responses from './0020-responses.ts';
import * as payments from './0021-payments.ts';
import * as mail from './0022-mail.ts';
import * as usageAdjustments from './0023-usage-adjustments.ts';
import * as taskLists from './0024-task-lists.ts';
import * as autoRecharge from './0025-auto-recharge.ts';
import * as channels from './0026-channels.ts';
import * as chatMessagesAssistant from './0027-chat-messages-assistant.ts';
import * as requestLogTimeKey from './0028-request-log-time-key.ts';
import * as requestLogTwoIndexes from './0029-request-log-two-indexes.ts';
import * as keySpendDaily from './0030-key-spend-daily.ts';

/** Migrations in order; a new one is a new file added here. */
const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-tasks-jobs': tasksJobs,
  '0003-assistants': assistants,
  '0005-chatbot': chatbot,
  '0006-key-rate-limit': keyRateLimit,
  '0007-job-queues': jobQueues,
  '0008-changes': changes,
  '0009-balance-leases': balanceLeases,
  '0010-idempotency-keys': idempotencyKeys,
  '0012-model-operator-fields': modelOperatorFields,
  '0013-sign-in': signIn,
  '0014-ledger-key-audit': ledgerKeyAudit,
  '0015-key-management': keyManagement,
  '0017-orgs-invitations-bots': orgsInvitationsBots,
  '0016-request-log': requestLog,
  '0018-vouchers': vouchers,
  '0020-responses': responses,
  '0021-payments': payments,
  '0022-mail': mail,
  '0023-usage-adjustments': usageAdjustments,
  '0024-task-lists': taskLists,
  '0025-auto-recharge': autoRecharge,
  '0026-channels': channels,
  '0027-chat-messages-assistant': chatMessagesAssistant,
  '0028-request-log-time-key': requestLogTimeKey,
  '0029-request-log-two-indexes': requestLogTwoIndexes,
  '0030-key-spend-daily': keySpendDaily,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
