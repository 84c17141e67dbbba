import type { ReactNode } from "react";

/** One term and its value in a `facts` list (a record's details, laid out as a grid by styles.css). */
export function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="fact">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** A record's details from a list of [term, value] pairs, in that order. */
export function Facts({ facts }: { facts: readonly (readonly [string, ReactNode])[] }) {
  return (
    <dl className="facts">
      {facts.map(([term, value]) => (
        <Fact key={term} label={term}>
          {value}
        </Fact>
      ))}
    </dl>
  );
}
