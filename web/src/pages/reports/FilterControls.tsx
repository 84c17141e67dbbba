import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import { Field } from "../../components/Field";
import { messageOf } from "../../components/states";
import { useCan } from "../../permissions";
import type { FilterName, ReportState } from "./report-state";

/** The catalog lists are paged at most this long: a longer one asks to narrow it first. */
const LIST_LIMIT = 500;

interface Named {
  id: number;
  name: string;
}

interface ListAnswer {
  items: Named[];
  total: number;
}

const toList = (answer: { data: Named[]; pagination?: { total: number } }): ListAnswer => ({
  items: answer.data.map(({ id, name }) => ({ id, name })),
  total: answer.pagination?.total ?? answer.data.length,
});

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
 * The report's filters, each one id. The choices come from the catalog lists (narrowed by the
 * brand, program and account chosen); without catalog.read the ids in the address still apply.
 */
export function FilterControls({ state, onChange, errorOf }: FilterControlsProps) {
  const canList = useCan()("catalog.read");
  const { brandId, programId, accountId } = state.filters;
  const brands = useQuery({
    queryKey: ["report-filter", "brands"],
    queryFn: async () => toList(await unwrap(api.GET("/api/v1/brands", { params: { query: { limit: LIST_LIMIT } } }))),
    enabled: canList,
  });
  const programs = useQuery({
    queryKey: ["report-filter", "programs", brandId],
    queryFn: async () =>
      toList(
        await unwrap(
          api.GET("/api/v1/programs", {
            params: { query: { limit: LIST_LIMIT, ...(brandId !== undefined ? { brandId } : {}) } },
          }),
        ),
      ),
    enabled: canList,
  });
  const accounts = useQuery({
    queryKey: ["report-filter", "accounts", brandId, programId],
    queryFn: async () =>
      toList(
        await unwrap(
          api.GET("/api/v1/accounts", {
            params: {
              query: {
                limit: LIST_LIMIT,
                ...(brandId !== undefined ? { brandId } : {}),
                ...(programId !== undefined ? { programId } : {}),
              },
            },
          }),
        ),
      ),
    enabled: canList,
  });
  const links = useQuery({
    queryKey: ["report-filter", "links", brandId, programId, accountId],
    queryFn: async () =>
      toList(
        await unwrap(
          api.GET("/api/v1/links", {
            params: {
              query: {
                limit: LIST_LIMIT,
                ...(brandId !== undefined ? { brandId } : {}),
                ...(programId !== undefined ? { programId } : {}),
                ...(accountId !== undefined ? { accountId } : {}),
              },
            },
          }),
        ),
      ),
    enabled: canList,
  });
  const sources = useQuery({
    queryKey: ["report-filter", "traffic-sources"],
    queryFn: async () =>
      toList(await unwrap(api.GET("/api/v1/traffic-sources", { params: { query: { limit: LIST_LIMIT } } }))),
    enabled: canList,
  });
  const trackers = useQuery({
    queryKey: ["report-filter", "trackers"],
    queryFn: async () =>
      toList(await unwrap(api.GET("/api/v1/trackers", { params: { query: { limit: LIST_LIMIT } } }))),
    enabled: canList,
  });
  const lists: Record<FilterName, typeof brands> = {
    brandId: brands,
    programId: programs,
    accountId: accounts,
    linkId: links,
    trafficSourceId: sources,
    trackerId: trackers,
  };

  const set = (name: FilterName, value: string) => {
    const filters = { ...state.filters };
    if (value === "") delete filters[name];
    else filters[name] = Number(value);
    onChange({ ...state, filters, offset: 0 });
  };

  return (
    <>
      {!canList && (
        <p className="muted small">Names need the catalog.read permission: filters show the ids in the address.</p>
      )}
      <div className="report-filters">
        {(Object.keys(FILTER_LABELS) as FilterName[]).map((name) => {
          const list = lists[name];
          const current = state.filters[name];
          const items = list.data?.items ?? [];
          const hint = !canList
            ? undefined
            : list.isError
              ? `The list could not be read: ${messageOf(list.error)}`
              : list.data && list.data.total > items.length
                ? `The first ${items.length} of ${list.data.total}: narrow by brand, program or account.`
                : undefined;
          return (
            <Field key={name} label={FILTER_LABELS[name]} hint={hint} error={errorOf(name)}>
              {(props) => (
                <select {...props} value={current ?? ""} onChange={(e) => set(name, e.target.value)}>
                  <option value="">Any</option>
                  {current !== undefined && !items.some((item) => item.id === current) && (
                    <option value={current}>#{current}</option>
                  )}
                  {items.map((item) => (
                    <option key={item.id} value={item.id}>
                      {item.name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          );
        })}
      </div>
    </>
  );
}
