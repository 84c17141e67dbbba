-- The macro a traffic source fills with its own click id (`{clickid}`, `[CLICK_ID]`...): the link
-- generator adds `<click_id_param>=<click_id_macro>` to the tracking URL. Null for none.
alter table traffic_sources add column click_id_macro text;
