// Placeholder: being written.
import type { Tab } from '../router';

export function RunDetail({ id, tab }: { id: string; tab: Tab }) {
  return <section className="view" data-run={id} data-tab={tab} />;
}
