import os from 'node:os';

/** Who runs the ops CLI, for its audit rows: `OPS_ACTOR`, else the OS user; and on which host. */
export interface OpsActor {
  readonly id: string;
  readonly host: string;
}

/**
 * The CLI holds the database's credentials, so whoever runs it could write any name: the OS
 * user is what the host's own login records can vouch for, and `OPS_ACTOR` names the person
 * where everyone shares one account (a container's `node`).
 */
export function opsActor(configured: string | undefined): OpsActor {
  let user: string;
  try {
    user = os.userInfo().username;
  } catch {
    // No passwd entry for this uid (some containers).
    user = `uid-${process.getuid?.() ?? 'unknown'}`;
  }
  return { id: configured ?? user, host: os.hostname() };
}
