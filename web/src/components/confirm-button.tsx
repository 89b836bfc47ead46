import { useEffect, useId, useRef, useState } from 'react';

/**
 * A destructive action behind a confirmation: the button opens a modal dialog (focus moves into it, Escape cancels) that
 * names what will happen; only its confirm button acts.
 */
export function ConfirmButton({
  label,
  title,
  message,
  confirmLabel,
  onConfirm,
  disabled,
  ariaLabel,
}: {
  label: string;
  title: string;
  message: string;
  confirmLabel: string;
  onConfirm: () => void;
  disabled?: boolean;
  /** A fuller accessible name where the visible label is short (a row's "Delete" names its row), starting with the label. */
  ariaLabel?: string;
}) {
  const [open, setOpen] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) element.showModal();
    if (!open && element.open) element.close();
  }, [open]);
  return (
    <>
      <button type="button" className="danger" onClick={() => setOpen(true)} disabled={disabled} aria-label={ariaLabel}>
        {label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} onClose={() => setOpen(false)}>
        <h2 id={titleId}>{title}</h2>
        <p>{message}</p>
        <div className="actions">
          <button type="button" onClick={() => setOpen(false)}>
            Cancel
          </button>
          <button
            type="button"
            className="danger"
            onClick={() => {
              setOpen(false);
              onConfirm();
            }}
          >
            {confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}
