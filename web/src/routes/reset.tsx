import { Link } from '@tanstack/react-router';

/** DESIGN §11 lists /reset/:token; the management API has no password-reset call yet, so the page says what to do instead. */
export function ResetPage() {
  return (
    <main id="main" className="narrow">
      <h1>Set a new password</h1>
      <p>Password reset links are not available on this gateway yet. Ask its operator to set a new password for you, then sign in and change it under your profile.</p>
      <p>
        <Link to="/login">Sign in</Link>
      </p>
    </main>
  );
}
