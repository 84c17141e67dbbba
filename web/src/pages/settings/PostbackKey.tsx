import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ConfirmButton } from "../../components/ConfirmButton";
import { CopyButton } from "../../components/CopyButton";
import { Field, fieldError } from "../../components/Field";
import { SecretOnce } from "../../components/SecretOnce";
import { messageOf } from "../../components/states";
import { formatDateTimeIn } from "../../format";
import { SETTINGS } from "./queries";

interface Rotated {
  postbackKey: string;
  postbackUrl: string;
}

/** How long the replaced key may keep working: the API takes 0 to 168 hours. */
const GRACE_CHOICES = [
  { hours: 0, label: "None: it stops at once" },
  { hours: 1, label: "1 hour" },
  { hours: 24, label: "24 hours" },
  { hours: 72, label: "3 days" },
  { hours: 168, label: "7 days" },
] as const;

interface PostbackKeyProps {
  template: string;
  canRotate: boolean;
  /** Until when the key the last rotation replaced still works; null when it no longer does. */
  previousKeyValidUntil: string | null;
  /** The account's time zone, in which that end is shown. */
  timeZone: string;
}

/**
 * The postback URL: the API shows its key only in the answer to a rotation, so this shows the
 * template, and after a rotation the new key and URL until they are dismissed. A rotation may
 * give the replaced key a grace period, so programs can be moved over one by one; its end is
 * shown, and it can be ended early.
 */
export function PostbackKey({ template, canRotate, previousKeyValidUntil, timeZone }: PostbackKeyProps) {
  const queryClient = useQueryClient();
  const [rotated, setRotated] = useState<Rotated | null>(null);
  const [graceHours, setGraceHours] = useState(0);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: SETTINGS });
  const rotate = useMutation({
    gcTime: 0,
    mutationFn: async (hours: number) =>
      (await unwrap(api.POST("/api/v1/settings/postback-key", { body: { graceHours: hours } }))).data,
    onSuccess: (answer) => {
      rotate.reset();
      setRotated({ postbackKey: answer.postbackKey, postbackUrl: answer.postbackUrl });
      refresh();
    },
  });
  const endPrevious = useMutation({
    mutationFn: async () => (await unwrap(api.DELETE("/api/v1/settings/postback-key/previous"))).data,
    onSuccess: refresh,
  });
  const grace = GRACE_CHOICES.find((c) => c.hours === graceHours) ?? GRACE_CHOICES[0];
  return (
    <section aria-labelledby="postback-title">
      <h2 id="postback-title">Postback URL</h2>
      <p>
        Programs send conversions to this address; <code>{"{postbackKey}"}</code> stands for the account's secret
        postback key, which is shown only once, right after it is rotated.
      </p>
      <p className="template">
        <code>{template}</code>
      </p>
      {previousKeyValidUntil && (
        <div className="notice warning previous-key" role="status">
          <p>
            The previous postback key still works until{" "}
            <strong>{formatDateTimeIn(previousKeyValidUntil, timeZone)}</strong>: move every program to the new URL
            before then.
          </p>
          {canRotate && (
            <ConfirmButton
              label="End it now"
              danger
              disabled={endPrevious.isPending}
              question="Stop the previous postback key now? Programs still sending to it get their conversions refused from then on."
              onConfirm={() => endPrevious.mutate()}
            />
          )}
        </div>
      )}
      {endPrevious.isError && (
        <p className="notice error" role="alert">
          {messageOf(endPrevious.error)}
        </p>
      )}
      {rotated ? (
        <>
          <SecretOnce title="The new postback key" value={rotated.postbackKey} onDone={() => setRotated(null)} />
          <p className="rotated-url">
            The postback URL with the new key:
            <br />
            <code>{rotated.postbackUrl}</code> <CopyButton value={rotated.postbackUrl} label="Copy the URL" />
          </p>
        </>
      ) : (
        canRotate && (
          <div className="actions rotate-key">
            <Field
              label="The current key keeps working for"
              error={fieldError(rotate.error, "graceHours")}
              hint="Time to move programs to the new URL one by one. A rotation during a grace period stops the older key at once."
            >
              {(props) => (
                <select {...props} value={graceHours} onChange={(e) => setGraceHours(Number(e.target.value))}>
                  {GRACE_CHOICES.map((c) => (
                    <option key={c.hours} value={c.hours}>
                      {c.label}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <ConfirmButton
              label="Rotate postback key"
              danger
              disabled={rotate.isPending}
              question={
                graceHours === 0
                  ? "Issue a new postback key? The current key stops working at once: every program must switch to the new URL, or its conversions are refused."
                  : `Issue a new postback key? The current key keeps working for ${grace.label}, then stops: move every program to the new URL before then.`
              }
              onConfirm={() => rotate.mutate(graceHours)}
            />
          </div>
        )
      )}
      {rotate.isError && !fieldError(rotate.error, "graceHours") && (
        <p className="notice error" role="alert">
          {messageOf(rotate.error)}
        </p>
      )}
    </section>
  );
}
