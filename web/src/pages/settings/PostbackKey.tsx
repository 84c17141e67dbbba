import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ConfirmButton } from "../../components/ConfirmButton";
import { CopyButton } from "../../components/CopyButton";
import { SecretOnce } from "../../components/SecretOnce";
import { messageOf } from "../../components/states";
import { SETTINGS } from "./queries";

interface Rotated {
  postbackKey: string;
  postbackUrl: string;
}

/**
 * The postback URL: the API shows its key only in the answer to a rotation, so this shows the
 * template, and after a rotation the new key and URL until they are dismissed.
 */
export function PostbackKey({ template, canRotate }: { template: string; canRotate: boolean }) {
  const queryClient = useQueryClient();
  const [rotated, setRotated] = useState<Rotated | null>(null);
  const rotate = useMutation({
    gcTime: 0,
    mutationFn: async () => (await unwrap(api.POST("/api/v1/settings/postback-key"))).data,
    onSuccess: (answer) => {
      rotate.reset();
      setRotated({ postbackKey: answer.postbackKey, postbackUrl: answer.postbackUrl });
      void queryClient.invalidateQueries({ queryKey: SETTINGS });
    },
  });
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
          <p className="actions">
            <ConfirmButton
              label="Rotate postback key"
              danger
              disabled={rotate.isPending}
              question="Issue a new postback key? The current key stops working at once: every program must switch to the new URL, or its conversions are refused."
              onConfirm={() => rotate.mutate()}
            />
          </p>
        )
      )}
      {rotate.isError && (
        <p className="notice error" role="alert">
          {messageOf(rotate.error)}
        </p>
      )}
    </section>
  );
}
