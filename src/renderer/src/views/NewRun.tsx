// Placeholder: being written.
export function NewRunView() {
  return <section className="view" />;
}
