import { useMutation } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import { messageOf } from "../../components/states";

/**
 * "Send test message": a signed message of type `test` sent now to the webhook, as real ones are
 * signed, but not recorded as a delivery. The outcome is announced in a live region: delivered
 * with the receiver's status, or the reason it was not.
 */
export function TestMessage({ webhookId }: { webhookId: string }) {
  const test = useMutation({
    mutationFn: async () =>
      (await unwrap(api.POST("/api/v1/notifications/webhooks/{id}/test", { params: { path: { id: webhookId } } })))
        .data,
  });
  const outcome = test.data;
  return (
    <section className="panel test-message" aria-labelledby="test-message-title">
      <h2 id="test-message-title">Test message</h2>
      <p className="muted">
        Sends a signed message of type <code>test</code> to the URL now, with the current signing secret, whatever
        events the webhook takes. It is not listed under Deliveries and not retried.
      </p>
      <p className="actions">
        <button type="button" className="button" disabled={test.isPending} onClick={() => test.mutate()}>
          {test.isPending ? "Sending…" : "Send test message"}
        </button>
      </p>
      <div role="status" aria-live="polite" className="action-result">
        {test.isError && (
          <p className="notice error">
            <strong>Failed: </strong>
            {messageOf(test.error)}
          </p>
        )}
        {outcome &&
          (outcome.delivered ? (
            <p className="notice">
              <strong>Delivered: </strong>the receiver answered HTTP {outcome.status}.
            </p>
          ) : (
            <p className="notice error">
              <strong>Failed: </strong>
              {outcome.error ?? `the receiver answered HTTP ${outcome.status ?? "nothing"}.`}
            </p>
          ))}
      </div>
    </section>
  );
}
