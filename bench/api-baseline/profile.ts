import { mkdir, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

/**
 * BENCH_CPU_PROFILE=<directory>: a CPU profile of the service's process over each measured run,
 * written there as `<figure>.cpuprofile` (open it in Chrome's DevTools or any .cpuprofile
 * viewer). The profiler itself costs CPU, so the figures of a profiled run read high.
 */
export async function startProfile(figure: string): Promise<(() => Promise<string>) | undefined> {
  const dir = process.env.BENCH_CPU_PROFILE;
  if (dir === undefined || dir === "") return undefined;
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    session.disconnect();
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${figure.replace(/[^a-z0-9-]+/gi, "_")}.cpuprofile`);
    await writeFile(file, JSON.stringify(profile));
    return file;
  };
}
