// Placeholder: being written.
export function SessionsView() {
  return <section className="view" />;
}
