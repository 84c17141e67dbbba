import { useMutation } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { Facts } from "../../components/Facts";
import { messageOf } from "../../components/states";
import { type ConnectionTest, type PostbackTest, sourcesApi } from "./api";

/**
 * The test buttons of a traffic source's integrations: each sends a sample now and shows what
 * happened in a live region, success or failure with its reason (docs/dashboard.md).
 */

/** Success or failure in words and colour, announced politely when it arrives. */
function Verdict({ ok, text }: { ok: boolean; text: string }) {
  return (
    <p className={ok ? "notice" : "notice error"}>
      <strong>{ok ? "Success: " : "Failed: "}</strong>
      {text}
    </p>
  );
}

/** What the postback test sent and what the network answered. */
function PostbackOutcome({ outcome }: { outcome: PostbackTest }) {
  const ok = outcome.error === null;
  const response = outcome.response;
  const facts: [string, ReactNode][] = [
    [
      "Request",
      <code key="request" className="answer-text">
        {outcome.request.method} {outcome.request.url}
      </code>,
    ],
    ["Response", response === null ? "No answer" : `HTTP ${response.status}`],
  ];
  if (response !== null) {
    facts.push([
      "Body",
      response.body === "" ? (
        "Empty"
      ) : (
        <pre key="body" className="test-body">
          {response.body}
        </pre>
      ),
    ]);
  }
  return (
    <>
      <Verdict ok={ok} text={ok ? "the network accepted the test postback." : (outcome.error ?? "")} />
      <Facts facts={facts} />
    </>
  );
}

/** "Send test": a sample conversion to the saved postback URL (nothing recorded). */
export function PostbackTestButton({ id, disabled }: { id: number; disabled?: boolean }) {
  const test = useMutation({ mutationFn: () => sourcesApi.testPostback(id) });
  return (
    <section className="panel test-panel" aria-labelledby="postback-test-title">
      <h2 id="postback-test-title">Test the postback</h2>
      <p className="muted">
        Sends one sample conversion to the saved URL now, whether the postback is enabled or not. Its click id and
        conversion id start with <code>test_</code>; nothing is recorded. Secrets in the URL are shown masked.
      </p>
      <p className="actions">
        <button
          type="button"
          className="button"
          disabled={disabled === true || test.isPending}
          onClick={() => test.mutate()}
        >
          {test.isPending ? "Sending…" : "Send test"}
        </button>
      </p>
      <div role="status" aria-live="polite" className="action-result">
        {test.isError && <Verdict ok={false} text={messageOf(test.error)} />}
        {test.data && <PostbackOutcome outcome={test.data} />}
      </div>
    </section>
  );
}

function connectionText(outcome: ConnectionTest): string {
  return outcome.ok
    ? "Google accepted the credentials, the account and the conversion actions (nothing was uploaded)."
    : (outcome.error ?? "Google refused the test.");
}

/** The connection test of a source's Google Ads integration: the button and its answer go in different places. */
export function useConnectionTest(id: number) {
  return useMutation({ mutationFn: () => sourcesApi.testGoogleAds(id) });
}
type ConnectionTestRun = ReturnType<typeof useConnectionTest>;

/** "Test connection": the token exchange and a validate-only ingest with the saved settings. */
export function ConnectionTestButton({ test }: { test: ConnectionTestRun }) {
  return (
    <button type="button" className="button" disabled={test.isPending} onClick={() => test.mutate()}>
      {test.isPending ? "Testing…" : "Test connection"}
    </button>
  );
}

/** The connection test's answer, announced politely when it arrives. */
export function ConnectionTestResult({ test }: { test: ConnectionTestRun }) {
  return (
    <div role="status" aria-live="polite" className="action-result test-result">
      {test.isError && <Verdict ok={false} text={messageOf(test.error)} />}
      {test.data && <Verdict ok={test.data.ok} text={connectionText(test.data)} />}
    </div>
  );
}
