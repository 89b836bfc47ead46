import type { LedgerHealth } from '../billing/balance-book.ts';

/** One dependency readiness looks at; rejects (or times out) when it cannot serve. */
export type Probe = () => Promise<void>;

export interface CheckResult {
  ok: boolean;
  error?: string;
  [detail: string]: unknown;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckResult>;
}

const PROBE_TIMEOUT_MS = 2_000;

/**
 * GET /readyz (DESIGN §14): the database answers a real query, ledger writes are succeeding (charges that cannot be written
 * stay queued and are retried, and readiness says so), and Redis answers when it is configured. Liveness (`/healthz`) stays
 * a plain "the process runs": a database fault must take a node out of the load balancer, not get it restarted.
 */
export class ReadinessService {
  constructor(
    private readonly probes: Readonly<Record<string, Probe>>,
    private readonly ledger: () => LedgerHealth,
    private readonly requestLog?: () => LedgerHealth,
  ) {}

  async check(): Promise<Readiness> {
    const checks: Record<string, CheckResult> = {};
    await Promise.all(
      Object.entries(this.probes).map(async ([name, probe]) => {
        checks[name] = await withTimeout(probe());
      }),
    );
    const ledger = this.ledger();
    checks.ledger = ledger.ok
      ? { ok: true, queued: ledger.queued }
      : { ok: false, error: `ledger writes failing since ${new Date(ledger.failingSince ?? 0).toISOString()}: ${ledger.lastError ?? 'unknown error'}`, queued: ledger.queued };
    const log = this.requestLog?.();
    if (log) {
      checks.requestLog = log.ok
        ? { ok: true, queued: log.queued }
        : { ok: false, error: `request log writes failing since ${new Date(log.failingSince ?? 0).toISOString()}: ${log.lastError ?? 'unknown error'}`, queued: log.queued };
    }
    return { ready: Object.values(checks).every((check) => check.ok), checks };
  }
}

async function withTimeout(probe: Promise<void>): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe, timeout]);
    return { ok: true };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}
