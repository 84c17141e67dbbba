export { emitNotification } from "./events.js";
