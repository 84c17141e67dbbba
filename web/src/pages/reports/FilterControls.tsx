import { useMemo } from "react";
import { Field } from "../../components/Field";
import { SearchPicker } from "../../components/SearchPicker";
import { useCan } from "../../permissions";
import { catalogPicker } from "../catalog/picker-sources";
import type { FilterName, ReportState } from "./report-state";

const FILTER_LABELS: Record<FilterName, string> = {
  brandId: "Brand",
  programId: "Program",
  accountId: "Account",
  linkId: "Link",
  trafficSourceId: "Traffic source",
  trackerId: "Tracker",
};

interface FilterControlsProps {
  state: ReportState;
  onChange: (state: ReportState) => void;
  errorOf: (name: FilterName) => string | undefined;
}

/**
 * The report's filters, each one id, found by typing in the catalog lists (narrowed by the
 * brand, program and account chosen); without catalog.read the ids in the address still apply.
 */
export function FilterControls({ state, onChange, errorOf }: FilterControlsProps) {
  const canList = useCan()("catalog.read");
  const { brandId, programId, accountId } = state.filters;
  const sources = useMemo(
    (): Record<FilterName, ReturnType<typeof catalogPicker>> => ({
      brandId: catalogPicker("brands"),
      programId: catalogPicker("programs", { brandId }),
      accountId: catalogPicker("accounts", { brandId, programId }),
      linkId: catalogPicker("links", { brandId, programId, accountId }),
      trafficSourceId: catalogPicker("traffic-sources"),
      trackerId: catalogPicker("trackers"),
    }),
    [brandId, programId, accountId],
  );

  const set = (name: FilterName, value: number | undefined) => {
    const filters = { ...state.filters };
    if (value === undefined) delete filters[name];
    else filters[name] = value;
    onChange({ ...state, filters, offset: 0 });
  };

  return (
    <>
      {!canList && (
        <p className="muted small">Names need the catalog.read permission: filters show the ids in the address.</p>
      )}
      <div className="report-filters">
        {(Object.keys(FILTER_LABELS) as FilterName[]).map((name) => {
          const current = state.filters[name];
          return canList ? (
            <SearchPicker
              key={name}
              label={FILTER_LABELS[name]}
              source={sources[name]}
              value={current}
              onChange={(id) => set(name, id)}
              none="Any"
              error={errorOf(name)}
            />
          ) : (
            <Field key={name} label={FILTER_LABELS[name]} error={errorOf(name)}>
              {(props) => (
                <select
                  {...props}
                  value={current ?? ""}
                  onChange={(e) => set(name, e.target.value === "" ? undefined : Number(e.target.value))}
                >
                  <option value="">Any</option>
                  {current !== undefined && <option value={current}>#{current}</option>}
                </select>
              )}
            </Field>
          );
        })}
      </div>
    </>
  );
}
