import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { AttemptView } from "../../components/AttemptView";
import { Pager } from "../../components/Pager";
import { Empty, ErrorState, Loading, messageOf } from "../../components/states";
import { useCan } from "../../permissions";
import { withOffset } from "../../search-params";
import { catalogId } from "../catalog/search";
import { ActionResult, type Result } from "../webhooks/parts";
import { postbacksChanged, sourcesApi } from "./api";
import { EDIT_PERMISSION, SourceFrame } from "./parts";
import { attemptsQuery, refreshWhile } from "./queries";

// The page reaches its route by id: its routes module imports it, never the other way.
const sourcePostbackAttemptsRoute = getRouteApi("/app/catalog/traffic-sources/$sourceId/postbacks/$postbackId");

/** One postback sent to a traffic source: each attempt's request and answer, and resend. */
export function PostbackAttemptsPage() {
  const params = sourcePostbackAttemptsRoute.useParams();
  const id = catalogId(params.sourceId) ?? 0;
  return (
    <SourceFrame
      id={id}
      section="postbacks"
      title={`Postback ${params.postbackId}`}
      trail={
        <>
          <Link to="/catalog/traffic-sources/$sourceId/postbacks" params={{ sourceId: String(id) }}>
            Postbacks sent
          </Link>{" "}
          / {params.postbackId}
        </>
      }
    >
      {() => <Attempts id={id} postbackId={params.postbackId} />}
    </SourceFrame>
  );
}

function Attempts({ id, postbackId }: { id: number; postbackId: string }) {
  const search = sourcePostbackAttemptsRoute.useSearch();
  const navigate = useNavigate({ from: "/catalog/traffic-sources/$sourceId/postbacks/$postbackId" });
  const client = useQueryClient();
  const can = useCan();
  const [until, setUntil] = useState<number | null>(null);
  // After a resend, the list is asked again until the new attempt shows.
  const attempts = useQuery({
    ...attemptsQuery(id, postbackId, search.offset ?? 0),
    refetchInterval: (query) => refreshWhile(until !== null && (query.state.data?.pagination.total ?? 0) < until),
  });
  const [result, setResult] = useState<Result>(null);
  const resend = useMutation({
    mutationFn: () => sourcesApi.resend(id, postbackId),
    onSuccess: () => {
      setResult({ tone: "ok", text: "Queued for a new attempt." });
      // The worker sends it shortly: the page follows until its attempt is listed.
      setUntil((attempts.data?.pagination.total ?? 0) + 1);
    },
    onError: (error) => setResult({ tone: "error", text: messageOf(error) }),
    onSettled: () => postbacksChanged(client, id),
  });
  return (
    <>
      {can(EDIT_PERMISSION) && (
        <p className="actions">
          <button
            type="button"
            className="button primary"
            disabled={resend.isPending}
            onClick={() => {
              setResult(null);
              resend.mutate();
            }}
          >
            Resend
          </button>
        </p>
      )}
      <ActionResult result={result} />
      <section aria-labelledby="attempts-title">
        <h2 id="attempts-title" className="attempts-title">
          Attempts
        </h2>
        {attempts.isPending ? (
          <Loading label="Loading attempts…" />
        ) : attempts.isError ? (
          <ErrorState error={attempts.error} onRetry={() => void attempts.refetch()} />
        ) : attempts.data.data.length === 0 ? (
          <Empty>No attempt yet: the postback is waiting to be sent.</Empty>
        ) : (
          <>
            {attempts.data.data.map((a) => (
              <AttemptView key={a.id} attempt={a} />
            ))}
            <Pager
              page={attempts.data.pagination}
              label="Attempts"
              onOffset={(next) => void navigate({ search: withOffset(search, next) })}
            />
          </>
        )}
      </section>
    </>
  );
}
