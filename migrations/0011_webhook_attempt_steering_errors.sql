-- Two more attempt error types: a postback not sent because a click value (visitor input) would
-- have changed its scheme, user info, host or port (url_origin_changed), or climbed its path with
-- a '.'/'..' segment (url_path_changed).
alter table webhook_attempts drop constraint webhook_attempts_error_type_check;
alter table webhook_attempts add constraint webhook_attempts_error_type_check
  check (error_type in ('timeout', 'connection_refused', 'dns', 'tls', 'http_status', 'invalid_url', 'blocked_address',
                        'url_origin_changed', 'url_path_changed'));
