// A link to no run or page of this app: said, with the way back, rather than
// the Runs view shown in silence (a mistyped or cut run id reads as if the run
// had vanished).

import { hrefOf } from '../../router';

export function MissingView({ what }: { what: string }) {
  const run = /^runs\/(.*)$/.exec(what);
  return (
    <section className="view" data-testid="missing-view">
      <div className="empty">
        <h1>{run ? 'No such run' : 'No such page'}</h1>
        <p data-testid="missing-what">
          {run ? (
            <>
              <code>{run[1]}</code> is not a run id: a run id is 6 to 32 hexadecimal characters, with <code>@HOST</code> for a remote&apos;s run.
            </>
          ) : (
            <>
              There is no page <code>#/{what}</code> in Warden.
            </>
          )}
        </p>
        <p>
          <a href={hrefOf({ view: 'runs' })}>Runs</a> · <a href={hrefOf({ view: 'history' })}>History</a>
        </p>
      </div>
    </section>
  );
}
