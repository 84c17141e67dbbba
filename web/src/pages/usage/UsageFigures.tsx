import { formatInteger, formatPercent } from "../../format";
import type { UsageStats } from "./queries";

interface Card {
  stat: string;
  label: string;
  hint: string;
  value: (s: UsageStats) => number;
  className?: string;
}

const CARDS: Card[] = [
  { stat: "totalCalls", label: "Calls", hint: "every status", value: (s) => s.totalCalls },
  {
    stat: "rateLimited",
    label: "Rate limited",
    hint: "refused with 429",
    value: (s) => s.rateLimited,
    className: "rate-limited",
  },
  { stat: "serverErrors", label: "Server errors", hint: "5xx answers", value: (s) => s.byStatusClass["5xx"] },
  { stat: "uniqueIps", label: "Client addresses", hint: "distinct IPs", value: (s) => s.uniqueIps },
];

/** The window's totals; the 429s stand apart, with their share of all calls. */
export function UsageFigures({ stats }: { stats: UsageStats | undefined }) {
  return (
    <ul className="cards">
      {CARDS.map((card) => {
        const value = stats ? card.value(stats) : undefined;
        return (
          <li
            key={card.stat}
            className={card.className ? `card ${card.className}` : "card"}
            data-stat={card.stat}
            data-value={value ?? ""}
          >
            <h3 className="card-label">
              {card.label} <span className="card-hint">{card.hint}</span>
            </h3>
            {value === undefined ? (
              <p className="card-value loading" aria-busy="true">
                …
              </p>
            ) : (
              <p className="card-value">{formatInteger(value)}</p>
            )}
            <p className="card-compare">
              {stats && card.stat === "rateLimited" && stats.totalCalls > 0
                ? `${formatPercent(stats.rateLimited / stats.totalCalls)} of calls`
                : "\u00a0"}
            </p>
          </li>
        );
      })}
    </ul>
  );
}
