import { connect } from "node:net";

// The tests of limits shared through Redis: they run where a Redis answers at REDIS_URL.

export const REDIS_URL = "redis://127.0.0.1:6379";

/** Whether something accepts TCP connections at the address of `url`. */
function reachable(url: string, timeoutMs = 1000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** Whether Redis is up at REDIS_URL; when not, warns that `file`'s shared-limit tests do not run. */
export async function findRedis(file: string): Promise<boolean> {
  const up = await reachable(REDIS_URL);
  if (!up) console.warn(`${file}: no Redis at ${REDIS_URL}; the shared-limit tests do not run`);
  return up;
}
