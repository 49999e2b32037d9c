// One labelled field of the New run and Settings forms: label, control, and
// under it either its one-line error or its hint.

import type { ReactNode } from 'react';

export function FormRow({ label, htmlFor, hint, error, children }: { label: string; htmlFor: string; hint?: ReactNode; error?: string | undefined; children: ReactNode }) {
  return (
    <div className={`form-row${error ? ' invalid' : ''}`}>
      <label className="form-label" htmlFor={htmlFor}>
        {label}
      </label>
      <div className="form-control">
        {children}
        {error ? (
          <p className="form-field-error" role="alert" data-testid="field-error">
            {error}
          </p>
        ) : (
          hint && <p className="form-hint">{hint}</p>
        )}
      </div>
    </div>
  );
}
