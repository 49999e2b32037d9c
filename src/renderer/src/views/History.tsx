// Placeholder: being written.
export function HistoryView() {
  return <section className="view" />;
}
