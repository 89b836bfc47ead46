import type { SignupMode } from '../../config/config.ts';
import { GatewayError } from '../../core/errors.ts';
import type { AccountsService } from './accounts-service.ts';
import type { SessionsService, SignedIn } from './sessions-service.ts';

/** Self sign-up (DESIGN §10): only when the operator opened it (`TOLLGATE_SIGNUP=open`); new users start with no balance. */
export class SignupService {
  constructor(
    private readonly accounts: AccountsService,
    private readonly sessions: SessionsService,
    private readonly mode: SignupMode,
  ) {}

  /** Creates the user (email unique, password rule of every door) and signs them in. */
  async signUp(input: { email: string; password: string; name: string }): Promise<SignedIn & { token: string }> {
    if (this.mode !== 'open') {
      const why = this.mode === 'invite' ? 'Sign-up needs an invitation: open the link an organization sent you.' : 'Sign-up is closed: ask the operator for an account.';
      throw new GatewayError('forbidden', why, { codeA: 'signup_closed' });
    }
    const user = await this.accounts.createUser(input.name, 0n, { email: input.email.trim(), password: input.password });
    return this.sessions.open(user);
  }
}
