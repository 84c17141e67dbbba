import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { api, unwrap } from "../../api/client";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { ISSUES } from "./queries";

/** The API's bound on a reason. */
const REASON_MAX = 500;

/**
 * Closes an open issue by hand with a reason (POST /issues/{id}/close); the page shows the reason
 * once it is closed. The caller shows this only to a person holding webhooks.update.
 */
export function CloseIssue({ issueId }: { issueId: string }) {
  const client = useQueryClient();
  const [reason, setReason] = useState("");
  const close = useMutation({
    mutationFn: async (body: { reason: string }) =>
      unwrap(api.POST("/api/v1/issues/{id}/close", { params: { path: { id: issueId } }, body })),
    // The issue, and the lists it appears in (the overview's open ones too), show it closed.
    onSuccess: () => client.invalidateQueries({ queryKey: ISSUES }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    close.mutate({ reason });
  };
  return (
    <form className="issue-close" onSubmit={submit} noValidate aria-labelledby="close-issue-title">
      <h2 id="close-issue-title">Close issue</h2>
      <Field
        label="Reason"
        error={fieldError(close.error, "reason")}
        hint="Kept with the issue. It opens again if its cause comes back."
      >
        {(props) => (
          <textarea
            {...props}
            name="reason"
            rows={2}
            maxLength={REASON_MAX}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
        )}
      </Field>
      <FormError message={formError(close.error, ["reason"])} />
      <p className="actions">
        <button type="submit" className="button primary" disabled={close.isPending}>
          {close.isPending ? "Closing…" : "Close issue"}
        </button>
      </p>
    </form>
  );
}
