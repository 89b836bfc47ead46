export function webBuildIsFresh(): boolean;
export function buildWeb(options?: { force?: boolean }): 'fresh' | 'built' | 'skipped';
