import { Link, type LinkOptions } from '@tanstack/react-router';

export interface NavLink {
  to: LinkOptions['to'];
  params?: LinkOptions['params'];
  label: string;
  /** Current only on this very path, not below it (the console's Overview at /console). */
  exact?: boolean;
}

/** A labelled navigation: its links in a list, the current page's marked with aria-current. */
export function NavLinks({ label, links, className, listClassName }: { label: string; links: readonly NavLink[]; className?: string; listClassName?: string }) {
  return (
    <nav aria-label={label} className={className}>
      <ul className={listClassName}>
        {links.map((link, index) => (
          <li key={`${index} ${link.to}`}>
            <Link to={link.to} params={link.params} activeOptions={{ exact: link.exact === true }} activeProps={{ 'aria-current': 'page' }}>
              {link.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
