import { useQueryClient } from "@tanstack/react-query";
import { getRouteApi, useNavigate } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { ApiFailure, api, unwrap } from "../api/client";
import { withLabel } from "../components/field-message";
import { messageOf } from "../components/states";
import { session } from "../session";

// The page reaches its route by id: its routes module imports it, never the other way.
const signInRoute = getRouteApi("/sign-in");

const REASONS = {
  expired: "Your session has expired or was revoked. Sign in again to continue.",
  "signed-out": "You have signed out.",
} as const;

export function SignIn() {
  const { reason, next } = signInRoute.useSearch();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<{ message: string; fields: Record<string, string> } | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setPending(true);
    setError(null);
    try {
      const answer = await unwrap(api.POST("/api/v1/auth", { body: { email, password } }));
      queryClient.clear();
      session.signIn(answer.data.token, answer.data.expiresAt);
      await navigate({ to: next ?? "/" });
    } catch (failure) {
      // The API's own message, next to the field it names when it names one.
      const fields: Record<string, string> = {};
      if (failure instanceof ApiFailure) {
        for (const e of failure.fieldErrors) fields[e.path.replace(/^\//, "")] = e.message;
      }
      // Fields the API named carry their own sentences; the notice then only points to them.
      const named = Object.keys(fields).length > 0;
      setError({ message: named ? "Correct the fields below." : messageOf(failure), fields });
      setPending(false);
    }
  }

  const fieldError = (name: string) => error?.fields[name];
  return (
    <main id="main" className="signin">
      <div className="signin-card">
        <h1>
          <img src="/favicon.svg" alt="" width="28" height="28" /> Sign in
        </h1>
        <p className="muted">Tracking platform dashboard</p>
        {reason && !error && (
          <p className={reason === "expired" ? "notice warning" : "notice"} role="status">
            {REASONS[reason]}
          </p>
        )}
        {error && (
          <p className="notice error" role="alert">
            {error.message}
          </p>
        )}
        <form onSubmit={submit} noValidate>
          <Field
            name="email"
            label="Email"
            type="email"
            autoComplete="username"
            value={email}
            onChange={setEmail}
            error={fieldError("email")}
          />
          <Field
            name="password"
            label="Password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={setPassword}
            error={fieldError("password")}
          />
          <button type="submit" className="button primary wide" disabled={pending}>
            {pending ? "Signing in…" : "Sign in"}
          </button>
        </form>
      </div>
    </main>
  );
}

/** A required, labelled input with the API's message for it below, when there is one. */
function Field(props: {
  name: string;
  label: string;
  type: "email" | "password";
  autoComplete: string;
  value: string;
  onChange: (value: string) => void;
  error: string | undefined;
}) {
  const { name, error } = props;
  return (
    <div className="field">
      <label htmlFor={name}>{props.label}</label>
      <input
        id={name}
        name={name}
        type={props.type}
        autoComplete={props.autoComplete}
        required
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${name}-error` : undefined}
      />
      {error && (
        <p id={`${name}-error`} className="field-error">
          {withLabel(props.label, error)}
        </p>
      )}
    </div>
  );
}
