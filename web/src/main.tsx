import { QueryClientProvider } from "@tanstack/react-query";
import { RouterProvider } from "@tanstack/react-router";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { queryClient, router } from "./router";
import { session } from "./session";
import "./styles.css";

// The session ended (a 401 from the API, or sign out): nothing cached for the person stays, and
// the sign-in page says why.
session.subscribe((reason) => {
  if (reason === "signed-in") return;
  queryClient.clear();
  void router.navigate({ to: "/sign-in", search: { reason } });
});

const root = document.getElementById("root");
if (!root) throw new Error("no #root element in index.html");
createRoot(root).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
