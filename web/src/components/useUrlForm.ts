import { useEffect, useState } from "react";

/**
 * A filter form's values, read from the page's address and reset to it whenever the address
 * changes (Back, a shared link): the address is the truth, the form follows it. `address` is
 * the address's filters as one text (JSON of the search), so any change to them resets the form.
 */
export function useUrlForm<V extends object>(fromUrl: () => V, address: string) {
  const [values, setValues] = useState<V>(fromUrl);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the address is what the form follows
  useEffect(() => setValues(fromUrl()), [address]);
  const set = (key: keyof V) => (event: { target: { value: string } }) =>
    setValues((v) => ({ ...v, [key]: event.target.value }));
  return { values, setValues, set };
}
