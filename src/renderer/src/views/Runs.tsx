// Placeholder: being written.
export function RunsView() {
  return <section className="view" />;
}
