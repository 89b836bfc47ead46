import type { ColumnType } from 'kysely';

/**
 * Table types of the one query layer (Kysely) both engines share.
 * Money columns hold nano-units as 64-bit integers; they are written as bigint and always read through
 * `cast(… as text)` (see money-sql.ts), because SQLite's driver and pg's would otherwise hand back a float or a string.
 * Times are Unix milliseconds; flags are 0/1 integers (SQLite has no boolean).
 */
type MoneyColumn = ColumnType<string, bigint, bigint>;

export interface UsersTable {
  id: string;
  name: string;
  balance_nano: MoneyColumn;
  created_at: number;
}

export interface OrgsTable {
  id: string;
  name: string;
  owner_id: string;
  balance_nano: MoneyColumn;
  prompt_caching: number;
  created_at: number;
}

export interface OrgMembersTable {
  org_id: string;
  user_id: string;
  role: 'owner' | 'admin' | 'member';
}

export interface ApiKeysTable {
  id: string;
  key_hash: string;
  key_prefix: string;
  user_id: string;
  org_id: string | null;
  name: string | null;
  /** JSON array of model ids, or null for every model. */
  allowed_models: string | null;
  revoked_at: number | null;
  created_at: number;
}

export interface LedgerTable {
  id: string;
  account_type: 'user' | 'org';
  account_id: string;
  amount_nano: MoneyColumn;
  kind: 'charge' | 'credit' | 'refund';
  request_id: string | null;
  model: string | null;
  description: string;
  created_at: number;
}

export interface ProvidersTable {
  id: string;
  type: 'openai' | 'anthropic';
  base_url: string;
  api_key: string | null;
  updated_at: number;
}

export interface ModelsTable {
  id: string;
  /** The whole model record (catalog/model.ts) as JSON. */
  data: string;
  updated_at: number;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface Database {
  users: UsersTable;
  orgs: OrgsTable;
  org_members: OrgMembersTable;
  api_keys: ApiKeysTable;
  ledger: LedgerTable;
  providers: ProvidersTable;
  models: ModelsTable;
  settings: SettingsTable;
}
