import { useQuery } from "@tanstack/react-query";
import { Facts } from "../../components/Facts";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime } from "../../format";
import { serviceQuery } from "./queries";

/** For account admins: whether the service is healthy, part by part, and which build is deployed. */
export function ServiceStatus() {
  const service = useQuery(serviceQuery);
  return (
    <section className="panel" aria-labelledby="service-title">
      <h2 id="service-title">Service</h2>
      {service.isPending ? (
        <Loading label="Loading the service's health and build…" />
      ) : service.isError ? (
        <ErrorState error={service.error} onRetry={() => void service.refetch()} />
      ) : (
        <Facts
          facts={[
            ["Health", service.data.health.status],
            ...Object.entries(service.data.health.components).map(([name, part]) => [name, part.status] as const),
            ["Checked", formatDateTime(service.data.health.checkedAt)],
            ["Version", service.data.build.version],
            ["Build", service.data.build.buildNumber],
            ["Built", formatDateTime(service.data.build.buildTime)],
            ["Commit", <code key="commit">{service.data.build.commitSha}</code>],
          ]}
        />
      )}
    </section>
  );
}
