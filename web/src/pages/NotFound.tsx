import { Link } from "@tanstack/react-router";

export function NotFound() {
  return (
    <main id="main" className="content narrow">
      <h1>Page not found</h1>
      <p>There is no page at this address.</p>
      <Link to="/">Go to the overview</Link>
    </main>
  );
}
