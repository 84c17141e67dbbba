import { useState } from "react";

/** Copies `value` to the clipboard and says so; where the clipboard is refused, says that. */
export function CopyButton({ value, label = "Copy" }: { value: string; label?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState("copied");
    } catch {
      setState("failed");
    }
  };
  return (
    <>
      <button type="button" className="button secondary" onClick={copy}>
        {label}
      </button>
      <span className="muted small copy-state" role="status" aria-live="polite">
        {state === "copied" ? "Copied." : state === "failed" ? "Copy was refused; select the text and copy it." : ""}
      </span>
    </>
  );
}
