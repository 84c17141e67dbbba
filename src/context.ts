import type { Config } from "./config.js";
import type { ApiKeyVerifier, JwtSigner } from "./features/auth/index.js";
import type { BuildInfo } from "./platform/build-info.js";
import type { Clock } from "./platform/clock.js";
import type { Db } from "./platform/db/index.js";
import type { JobRegistry } from "./platform/jobs.js";

/** What every feature's routes and jobs are given: the process's shared parts. */
export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  /** This process's id in heartbeats and job runs. */
  nodeId: string;
  apiKeys: ApiKeyVerifier;
  jwt: JwtSigner;
  jobs: JobRegistry;
  build: BuildInfo;
}
