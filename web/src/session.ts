/**
 * The signed-in person's token. It lives in sessionStorage (this tab only, gone when the tab
 * closes) and is sent in the Authorization header only: never in a URL, never in a cookie.
 */
const KEY = "tp.session";

interface StoredSession {
  token: string;
  expiresAt: string;
}

type Listener = (reason: "expired" | "signed-out" | "signed-in") => void;
const listeners = new Set<Listener>();

function read(): StoredSession | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const parsed = JSON.parse(raw) as Partial<StoredSession>;
    return typeof parsed.token === "string" && typeof parsed.expiresAt === "string"
      ? { token: parsed.token, expiresAt: parsed.expiresAt }
      : null;
  } catch {
    return null;
  }
}

export const session = {
  /** The token, or null when signed out or past its expiry. */
  token(): string | null {
    const current = read();
    if (!current) return null;
    if (Date.parse(current.expiresAt) <= Date.now()) {
      sessionStorage.removeItem(KEY);
      return null;
    }
    return current.token;
  },
  signIn(token: string, expiresAt: string): void {
    sessionStorage.setItem(KEY, JSON.stringify({ token, expiresAt }));
    for (const listener of listeners) listener("signed-in");
  },
  /** Ends the session: the person signed out, or the API refused the token (401). */
  end(reason: "expired" | "signed-out"): void {
    sessionStorage.removeItem(KEY);
    for (const listener of listeners) listener(reason);
  },
  subscribe(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
