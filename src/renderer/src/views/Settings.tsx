// Placeholder: being written.
export function SettingsView() {
  return <section className="view" />;
}
