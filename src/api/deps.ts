/** What the API's routes are built from. Built once by `graphx start` (or a test) and passed down. */
import type { Client } from '@temporalio/client';
import type { GraphxConfig } from '../config';
import type { Db } from '../db/knex';
import type { Logger } from '@graphx/kit/logger';
import type { SecretBox } from '../security/secretBox';
import type { AppLogSource } from '../targets/target';

export interface ApiDeps {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  /** Temporal client; the API signals and queries workflows through it. */
  temporal: Client;
  /** Temporal Web UI (no namespace part) the console links to, when there is one. */
  temporalUiUrl?: string | null;
  /** Where request lines go (default the process logger; tests capture them). */
  log?: Logger;
  /**
   * Wakes this process's outbox relay after a committed outbox row (src/pipeline/outbox.ts). Without one (an API
   * process with no relay) rows wait for a relay's next poll, in this process or another.
   */
  pokeOutbox?: () => void;
  /** Where app logs are read (default: the `app_logs` table the local runners fill; on Kubernetes, the pods). */
  appLogSource?: AppLogSource;
}
