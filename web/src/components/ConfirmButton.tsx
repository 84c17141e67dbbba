import { type ReactNode, useId, useRef } from "react";

interface ConfirmButtonProps {
  /** The button's text, also the confirming button's. */
  label: string;
  /** The buttons' accessible name, when the text alone would not say what they act on (a row's "Delete"). */
  name?: string;
  /** What will happen, in words: the dialog's question. */
  question: ReactNode;
  onConfirm: () => void;
  danger?: boolean;
  disabled?: boolean;
}

/** A button that asks first, in a modal dialog (keyboard: Escape cancels, focus stays inside; showModal focuses Cancel, the first control). */
export function ConfirmButton({ label, name, question, onConfirm, danger, disabled }: ConfirmButtonProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const close = () => dialog.current?.close();
  return (
    <>
      <button
        type="button"
        className={danger ? "button danger" : "button secondary"}
        disabled={disabled}
        aria-label={name}
        onClick={() => dialog.current?.showModal()}
      >
        {label}
      </button>
      <dialog ref={dialog} className="confirm" aria-labelledby={titleId}>
        <p id={titleId}>{question}</p>
        <p className="actions">
          <button type="button" className="button secondary" onClick={close}>
            Cancel
          </button>
          <button
            type="button"
            className={danger ? "button danger" : "button primary"}
            aria-label={name}
            onClick={() => {
              close();
              onConfirm();
            }}
          >
            {label}
          </button>
        </p>
      </dialog>
    </>
  );
}
