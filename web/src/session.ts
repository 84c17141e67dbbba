/**
 * The signed-in person's token. It lives in sessionStorage (this tab only, kept across reloads,
 * gone when the tab closes) and is sent in the Authorization header only: never in a URL, never
 * in a cookie, never in localStorage. A new tab of the same origin without one asks the open tabs
 * over a BroadcastChannel and takes the answer; with no tab open it asks for a sign-in again.
 * Sign-out in one tab ends the session in every tab (docs/decisions.md, "Dashboard sessions").
 */
const KEY = "tp.session";
/** How long a new tab waits for an open tab's answer: same-origin tabs answer in a few ms. */
const HANDOFF_WAIT_MS = 300;

interface StoredSession {
  token: string;
  expiresAt: string;
}

type Reason = "expired" | "signed-out";
type Listener = (reason: Reason | "signed-in") => void;
/** What tabs say to each other; only tabs of this origin hear it. */
type Message =
  | { type: "ask" }
  | { type: "give"; session: StoredSession }
  | { type: "end"; reason: Reason; token: string | null };

const listeners = new Set<Listener>();

function parse(raw: unknown): StoredSession | null {
  if (typeof raw !== "object" || raw === null) return null;
  const parsed = raw as Partial<StoredSession>;
  return typeof parsed.token === "string" && typeof parsed.expiresAt === "string"
    ? { token: parsed.token, expiresAt: parsed.expiresAt }
    : null;
}

function read(): StoredSession | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    return raw ? parse(JSON.parse(raw)) : null;
  } catch {
    return null;
  }
}

/** The stored session while it is unexpired; an expired one is forgotten. */
function current(): StoredSession | null {
  const stored = read();
  if (!stored) return null;
  if (Date.parse(stored.expiresAt) <= Date.now()) {
    sessionStorage.removeItem(KEY);
    return null;
  }
  return stored;
}

function forget(reason: Reason): void {
  sessionStorage.removeItem(KEY);
  for (const listener of listeners) listener(reason);
}

const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("tp.session") : null;
let handoff: ((session: StoredSession) => void) | null = null;

channel?.addEventListener("message", (event: MessageEvent<Message>) => {
  const message = event.data;
  if (message.type === "ask") {
    const mine = current();
    if (mine) channel.postMessage({ type: "give", session: mine } satisfies Message);
  } else if (message.type === "give") {
    const given = parse(message.session);
    if (given && handoff) handoff(given);
  } else if (message.type === "end") {
    const mine = read();
    if (!mine) return;
    // A sign-out ends every tab; a refused token ends only the tabs that hold that token.
    if (message.reason === "signed-out" || message.token === mine.token) forget(message.reason);
  }
});

let asked: Promise<void> | null = null;

/** Asks the open tabs for their session once per page load; resolves when one answers or after the wait. */
function askOpenTabs(): Promise<void> {
  asked ??= new Promise<void>((resolve) => {
    if (!channel || read()) return resolve();
    const timer = setTimeout(done, HANDOFF_WAIT_MS);
    function done(): void {
      handoff = null;
      clearTimeout(timer);
      resolve();
    }
    handoff = (given) => {
      if (!read() && Date.parse(given.expiresAt) > Date.now()) sessionStorage.setItem(KEY, JSON.stringify(given));
      done();
    };
    channel.postMessage({ type: "ask" } satisfies Message);
  });
  return asked;
}

export const session = {
  /** The token, or null when signed out or past its expiry. */
  token(): string | null {
    return current()?.token ?? null;
  },
  /** Settles once this tab knows whether it has a session: its own, or one an open tab handed over. */
  ready(): Promise<void> {
    return askOpenTabs();
  },
  signIn(token: string, expiresAt: string): void {
    sessionStorage.setItem(KEY, JSON.stringify({ token, expiresAt }));
    for (const listener of listeners) listener("signed-in");
  },
  /** Ends the session here and in the other tabs: the person signed out, or the API refused the token (401). */
  end(reason: Reason): void {
    const token = read()?.token ?? null;
    channel?.postMessage({ type: "end", reason, token } satisfies Message);
    forget(reason);
  },
  subscribe(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
