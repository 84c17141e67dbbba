import { Fact } from "../../components/Facts";
import { ErrorState, Loading } from "../../components/states";
import { useMe } from "../../me";

/** The signed-in person as GET /api/v1/me answers: who, and what they may do. */
export function MePanel() {
  const me = useMe();
  return (
    <section className="panel" aria-labelledby="me-title">
      <h2 id="me-title">You</h2>
      {me.isPending ? (
        <Loading label="Loading who you are…" />
      ) : me.isError ? (
        <ErrorState error={me.error} onRetry={() => void me.refetch()} />
      ) : (
        <dl className="facts">
          <Fact label="Name">{me.data.name}</Fact>
          <Fact label="Email">{me.data.email}</Fact>
          <Fact label="Permissions">
            {me.data.permissions.length === 0 ? (
              <span className="muted">none</span>
            ) : (
              <ul className="permission-chips" aria-label="Your permissions">
                {me.data.permissions.map((permission) => (
                  <li key={permission}>
                    <code>{permission}</code>
                  </li>
                ))}
              </ul>
            )}
            <span className="muted small block">
              Effective permissions (account.admin includes most others). People and their permissions are managed by
              the operator.
            </span>
          </Fact>
        </dl>
      )}
    </section>
  );
}
