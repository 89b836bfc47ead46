import type { ReactNode } from 'react';

export type Fact = readonly [name: string, value: ReactNode];

/** Named values of one thing (a request, a task, a bot), as a description list. */
export function Facts({ facts }: { facts: readonly Fact[] }) {
  return (
    <dl className="details">
      {facts.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
