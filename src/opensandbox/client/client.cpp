// The client's three faces, each one line over the operation in operations.hpp: `async_*`
// returns it, `try_*` runs it on the client's executor and waits, and the throwing face
// raises what `try_*` returns.
#include "operations.hpp"

namespace ngfail::opensandbox {

using namespace detail;

client::client(client_options options) : state_(std::make_unique<client_state>(options)) {}
client::client(boost::asio::any_io_executor executor, client_options options)
    : state_(std::make_unique<client_state>(std::move(executor), options)) {}
client::~client() = default;
client::client(client&&) noexcept = default;
client& client::operator=(client&&) noexcept = default;

boost::asio::any_io_executor client::get_executor() const noexcept { return state_->executor; }
std::size_t client::idle_connections() const { return state_->pool.idle(); }

// ---- borrowed requests, copied when an operation is made ------------------------------------------

create_request create_request_ref::copy() const {
    return {.image = std::string(image),
            .entrypoint = entrypoint.copy(),
            .timeout_s = timeout_s,
            .resource_limits = resource_limits.copy(),
            .metadata = metadata.copy(),
            .wait_until_ready = wait_until_ready,
            .ready_timeout = ready_timeout,
            .ready_poll = ready_poll,
            .delete_if_failed = delete_if_failed,
            .snapshot_id = std::string(snapshot_id)};
}

struct command command_ref::copy() const {
    std::optional<std::string> owned_cwd;
    if (cwd) owned_cwd.emplace(*cwd);
    return {.command = std::string(command),
            .cwd = std::move(owned_cwd),
            .timeout = timeout,
            .envs = envs.copy(),
            .idle_timeout = idle_timeout,
            .total_timeout = total_timeout,
            .on_stdout = on_stdout.copy(),
            .on_stderr = on_stderr.copy(),
            .background = background};
}

code_run code_run_ref::copy() const {
    return {.code = std::string(code),
            .context_id = std::string(context_id),
            .language = std::string(language),
            .idle_timeout = idle_timeout,
            .total_timeout = total_timeout,
            .on_stdout = on_stdout.copy(),
            .on_stderr = on_stderr.copy()};
}

list_request list_request_ref::copy() const {
    return {.states = states.copy(), .metadata = metadata.copy(), .page = page, .page_size = page_size};
}

// ---- asynchronous ---------------------------------------------------------------------------

client::awaitable<sandbox_info> client::async_create(const create_request_ref& request, const call_options& options) {
    return create_operation(*state_, request.copy(), options);
}
client::awaitable<sandbox_info> client::async_get(std::string_view sandbox_id, const call_options& options) {
    return get_operation(*state_, std::string(sandbox_id), options);
}
client::awaitable<void> client::async_kill(std::string_view sandbox_id, const call_options& options) {
    return kill_operation(*state_, std::string(sandbox_id), options);
}
client::awaitable<std::string> client::async_renew(std::string_view sandbox_id, std::string_view expires_at,
                                                   const call_options& options) {
    return renew_operation(*state_, std::string(sandbox_id), std::string(expires_at), options);
}
client::awaitable<endpoint_info> client::async_endpoint(std::string_view sandbox_id, int port, const call_options& options) {
    return endpoint_operation(*state_, std::string(sandbox_id), port, options);
}
client::awaitable<exec_result> client::async_exec(std::string_view sandbox_id, const command_ref& cmd,
                                                  const call_options& options) {
    return exec_operation(*state_, std::string(sandbox_id), cmd.copy(), options);
}
client::awaitable<command_status> client::async_exec_status(std::string_view sandbox_id, std::string_view execution_id,
                                                            const call_options& options) {
    return exec_status_operation(*state_, std::string(sandbox_id), std::string(execution_id), options);
}
client::awaitable<void> client::async_ping(std::string_view sandbox_id, const call_options& options) {
    return ping_operation(*state_, std::string(sandbox_id), options);
}
client::awaitable<std::vector<sandbox_info>> client::async_list(const list_request_ref& request,
                                                                const call_options& options) {
    return list_operation(*state_, request.copy(), options);
}
client::awaitable<void> client::async_pause(std::string_view sandbox_id, const call_options& options) {
    return pause_operation(*state_, std::string(sandbox_id), options);
}
client::awaitable<void> client::async_resume(std::string_view sandbox_id, const call_options& options) {
    return resume_operation(*state_, std::string(sandbox_id), options);
}
client::awaitable<command_logs> client::async_exec_logs(std::string_view sandbox_id, std::string_view execution_id,
                                                        std::size_t cursor, const call_options& options) {
    return exec_logs_operation(*state_, std::string(sandbox_id), std::string(execution_id), cursor, options);
}
client::awaitable<void> client::async_interrupt(std::string_view sandbox_id, std::string_view execution_id,
                                                const call_options& options) {
    return interrupt_operation(*state_, std::string(sandbox_id), std::string(execution_id), options);
}
client::awaitable<void> client::async_upload(std::string_view sandbox_id, std::string_view path, std::string_view content,
                                             const call_options& options) {
    return upload_operation(*state_, std::string(sandbox_id), std::string(path), std::string(content), options);
}
client::awaitable<std::string> client::async_download(std::string_view sandbox_id, std::string_view path,
                                                      const call_options& options) {
    return download_operation(*state_, std::string(sandbox_id), std::string(path), options);
}
client::awaitable<std::string> client::async_download_range(std::string_view sandbox_id, std::string_view path,
                                                            std::uint64_t first, std::optional<std::uint64_t> last,
                                                            const call_options& options) {
    return download_range_operation(*state_, std::string(sandbox_id), std::string(path), first, last, options);
}
client::awaitable<std::string> client::async_read_lines(std::string_view sandbox_id, std::string_view path,
                                                        std::int64_t first_line, std::optional<std::int64_t> max_lines,
                                                        const call_options& options) {
    return read_lines_operation(*state_, std::string(sandbox_id), std::string(path), first_line, max_lines, options);
}
client::awaitable<std::map<std::string, entry_info>> client::async_file_info(std::string_view sandbox_id,
                                                                             const std::vector<std::string>& paths,
                                                                             const call_options& options) {
    return file_info_operation(*state_, std::string(sandbox_id), paths, options);
}
client::awaitable<void> client::async_delete_files(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                                   const call_options& options) {
    return delete_files_operation(*state_, std::string(sandbox_id), paths, options);
}
client::awaitable<std::vector<entry_info>> client::async_list_directory(std::string_view sandbox_id, std::string_view path,
                                                                        int depth, const call_options& options) {
    return list_directory_operation(*state_, std::string(sandbox_id), std::string(path), depth, options);
}
client::awaitable<void> client::async_create_directories(std::string_view sandbox_id,
                                                         const std::vector<std::string>& paths, int mode,
                                                         const call_options& options) {
    return create_directories_operation(*state_, std::string(sandbox_id), paths, mode, options);
}
client::awaitable<void> client::async_delete_directories(std::string_view sandbox_id,
                                                         const std::vector<std::string>& paths,
                                                         const call_options& options) {
    return delete_directories_operation(*state_, std::string(sandbox_id), paths, options);
}
client::awaitable<void> client::async_move_files(std::string_view sandbox_id, const std::vector<file_move>& moves,
                                                 const call_options& options) {
    return move_files_operation(*state_, std::string(sandbox_id), moves, options);
}
client::awaitable<void> client::async_set_permissions(std::string_view sandbox_id,
                                                      const std::map<std::string, file_permissions>& permissions,
                                                      const call_options& options) {
    return set_permissions_operation(*state_, std::string(sandbox_id), permissions, options);
}
client::awaitable<std::vector<entry_info>> client::async_search_files(std::string_view sandbox_id, std::string_view path,
                                                                      std::string_view pattern,
                                                                      const call_options& options) {
    return search_files_operation(*state_, std::string(sandbox_id), std::string(path), std::string(pattern), options);
}
client::awaitable<sandbox_info> client::async_patch_metadata(std::string_view sandbox_id, const metadata_patch& patch,
                                                             const call_options& options) {
    return patch_metadata_operation(*state_, std::string(sandbox_id), patch, options);
}
client::awaitable<metrics_sample> client::async_get_metrics(std::string_view sandbox_id, const call_options& options) {
    return get_metrics_operation(*state_, std::string(sandbox_id), options);
}
client::awaitable<std::size_t> client::async_watch_metrics(std::string_view sandbox_id, const metrics_callback& on_sample,
                                                           const call_options& options) {
    return watch_metrics_operation(*state_, std::string(sandbox_id), on_sample, options);
}
client::awaitable<snapshot_info> client::async_create_snapshot(std::string_view sandbox_id,
                                                               std::optional<std::string> name,
                                                               const call_options& options) {
    return create_snapshot_operation(*state_, std::string(sandbox_id), std::move(name), options);
}
client::awaitable<snapshot_info> client::async_get_snapshot(std::string_view snapshot_id, const call_options& options) {
    return get_snapshot_operation(*state_, std::string(snapshot_id), options);
}
client::awaitable<std::vector<snapshot_info>> client::async_list_snapshots(const snapshot_list_request& request,
                                                                           const call_options& options) {
    return list_snapshots_operation(*state_, request, options);
}
client::awaitable<void> client::async_delete_snapshot(std::string_view snapshot_id, const call_options& options) {
    return delete_snapshot_operation(*state_, std::string(snapshot_id), options);
}
client::awaitable<std::map<std::string, std::int64_t>> client::async_replace_contents(
    std::string_view sandbox_id, const std::map<std::string, content_replacement>& replacements,
    const call_options& options) {
    return replace_contents_operation(*state_, std::string(sandbox_id), replacements, options);
}
client::awaitable<code_context_info> client::async_create_code_context(std::string_view sandbox_id,
                                                                       std::string_view language,
                                                                       std::optional<std::string> cwd,
                                                                       const call_options& options) {
    return create_code_context_operation(*state_, std::string(sandbox_id), std::string(language), std::move(cwd),
                                         options);
}
client::awaitable<code_context_info> client::async_get_code_context(std::string_view sandbox_id,
                                                                    std::string_view context_id,
                                                                    const call_options& options) {
    return get_code_context_operation(*state_, std::string(sandbox_id), std::string(context_id), options);
}
client::awaitable<std::vector<code_context_info>> client::async_list_code_contexts(std::string_view sandbox_id,
                                                                                   std::string_view language,
                                                                                   const call_options& options) {
    return list_code_contexts_operation(*state_, std::string(sandbox_id), std::string(language), options);
}
client::awaitable<void> client::async_delete_code_context(std::string_view sandbox_id, std::string_view context_id,
                                                          const call_options& options) {
    return delete_code_context_operation(*state_, std::string(sandbox_id), std::string(context_id), options);
}
client::awaitable<void> client::async_delete_code_contexts(std::string_view sandbox_id, std::string_view language,
                                                           const call_options& options) {
    return delete_code_contexts_operation(*state_, std::string(sandbox_id), std::string(language), options);
}
client::awaitable<code_result> client::async_run_code(std::string_view sandbox_id, const code_run_ref& run,
                                                      const call_options& options) {
    return run_code_operation(*state_, std::string(sandbox_id), run.copy(), options);
}
client::awaitable<void> client::async_interrupt_code(std::string_view sandbox_id, std::string_view context_id,
                                                     const call_options& options) {
    return interrupt_code_operation(*state_, std::string(sandbox_id), std::string(context_id), options);
}
client::awaitable<std::string> client::async_create_session(std::string_view sandbox_id,
                                                            std::optional<std::string> cwd,
                                                            const call_options& options) {
    return create_session_operation(*state_, std::string(sandbox_id), std::move(cwd), options);
}
client::awaitable<exec_result> client::async_run_in_session(std::string_view sandbox_id, std::string_view session_id,
                                                            const command_ref& cmd, const call_options& options) {
    return run_in_session_operation(*state_, std::string(sandbox_id), std::string(session_id), cmd.copy(), options);
}
client::awaitable<void> client::async_delete_session(std::string_view sandbox_id, std::string_view session_id,
                                                     const call_options& options) {
    return delete_session_operation(*state_, std::string(sandbox_id), std::string(session_id), options);
}

// ---- noexcept: the asynchronous operation, waited for ------------------------------------------------

result<sandbox_info> client::try_create(const create_request& request, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return create_operation(*state_, request, options); });
}
result<sandbox_info> client::try_get(std::string_view sandbox_id, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_get(sandbox_id, options); });
}
result<void> client::try_kill(std::string_view sandbox_id, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_kill(sandbox_id, options); });
}
result<std::string> client::try_renew(std::string_view sandbox_id, std::string_view expires_at,
                                      const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_renew(sandbox_id, expires_at, options); });
}
result<endpoint_info> client::try_endpoint(std::string_view sandbox_id, int port, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_endpoint(sandbox_id, port, options); });
}
result<exec_result> client::try_exec(std::string_view sandbox_id, const command& cmd,
                                     const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return exec_operation(*state_, std::string(sandbox_id), cmd, options); });
}
result<command_status> client::try_exec_status(std::string_view sandbox_id, std::string_view execution_id,
                                               const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_exec_status(sandbox_id, execution_id, options); });
}
result<void> client::try_ping(std::string_view sandbox_id, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_ping(sandbox_id, options); });
}
result<std::vector<sandbox_info>> client::try_list(const list_request& request, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return list_operation(*state_, request, options); });
}
result<void> client::try_pause(std::string_view sandbox_id, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_pause(sandbox_id, options); });
}
result<void> client::try_resume(std::string_view sandbox_id, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_resume(sandbox_id, options); });
}
result<command_logs> client::try_exec_logs(std::string_view sandbox_id, std::string_view execution_id,
                                           std::size_t cursor, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_exec_logs(sandbox_id, execution_id, cursor, options); });
}
result<void> client::try_interrupt(std::string_view sandbox_id, std::string_view execution_id,
                                   const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_interrupt(sandbox_id, execution_id, options); });
}
result<void> client::try_upload(std::string_view sandbox_id, std::string_view path, std::string_view content,
                                const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_upload(sandbox_id, path, content, options); });
}
result<std::string> client::try_download(std::string_view sandbox_id, std::string_view path,
                                         const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_download(sandbox_id, path, options); });
}
result<std::string> client::try_download_range(std::string_view sandbox_id, std::string_view path, std::uint64_t first,
                                               std::optional<std::uint64_t> last,
                                               const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_download_range(sandbox_id, path, first, last, options); });
}
result<std::string> client::try_read_lines(std::string_view sandbox_id, std::string_view path, std::int64_t first_line,
                                           std::optional<std::int64_t> max_lines, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_read_lines(sandbox_id, path, first_line, max_lines, options); });
}
result<std::map<std::string, entry_info>> client::try_file_info(std::string_view sandbox_id,
                                                                const std::vector<std::string>& paths,
                                                                const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_file_info(sandbox_id, paths, options); });
}
result<void> client::try_delete_files(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                      const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_delete_files(sandbox_id, paths, options); });
}
result<std::vector<entry_info>> client::try_list_directory(std::string_view sandbox_id, std::string_view path, int depth,
                                                           const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_list_directory(sandbox_id, path, depth, options); });
}
result<void> client::try_create_directories(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                            int mode, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_create_directories(sandbox_id, paths, mode, options); });
}
result<void> client::try_delete_directories(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                            const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_delete_directories(sandbox_id, paths, options); });
}
result<void> client::try_move_files(std::string_view sandbox_id, const std::vector<file_move>& moves,
                                    const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_move_files(sandbox_id, moves, options); });
}
result<void> client::try_set_permissions(std::string_view sandbox_id,
                                         const std::map<std::string, file_permissions>& permissions,
                                         const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_set_permissions(sandbox_id, permissions, options); });
}
result<std::vector<entry_info>> client::try_search_files(std::string_view sandbox_id, std::string_view path,
                                                         std::string_view pattern,
                                                         const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_search_files(sandbox_id, path, pattern, options); });
}
result<sandbox_info> client::try_patch_metadata(std::string_view sandbox_id, const metadata_patch& patch,
                                                const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_patch_metadata(sandbox_id, patch, options); });
}
result<metrics_sample> client::try_get_metrics(std::string_view sandbox_id, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_get_metrics(sandbox_id, options); });
}
result<std::size_t> client::try_watch_metrics(std::string_view sandbox_id, const metrics_callback& on_sample,
                                              const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_watch_metrics(sandbox_id, on_sample, options); });
}
result<snapshot_info> client::try_create_snapshot(std::string_view sandbox_id, std::optional<std::string> name,
                                                  const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_create_snapshot(sandbox_id, name, options); });
}
result<snapshot_info> client::try_get_snapshot(std::string_view snapshot_id, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_get_snapshot(snapshot_id, options); });
}
result<std::vector<snapshot_info>> client::try_list_snapshots(const snapshot_list_request& request,
                                                              const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_list_snapshots(request, options); });
}
result<void> client::try_delete_snapshot(std::string_view snapshot_id, const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_delete_snapshot(snapshot_id, options); });
}
result<std::map<std::string, std::int64_t>> client::try_replace_contents(
    std::string_view sandbox_id, const std::map<std::string, content_replacement>& replacements,
    const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_replace_contents(sandbox_id, replacements, options); });
}
result<code_context_info> client::try_create_code_context(std::string_view sandbox_id, std::string_view language,
                                                          std::optional<std::string> cwd,
                                                          const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_create_code_context(sandbox_id, language, cwd, options); });
}
result<code_context_info> client::try_get_code_context(std::string_view sandbox_id, std::string_view context_id,
                                                       const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_get_code_context(sandbox_id, context_id, options); });
}
result<std::vector<code_context_info>> client::try_list_code_contexts(std::string_view sandbox_id,
                                                                      std::string_view language,
                                                                      const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_list_code_contexts(sandbox_id, language, options); });
}
result<void> client::try_delete_code_context(std::string_view sandbox_id, std::string_view context_id,
                                             const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_delete_code_context(sandbox_id, context_id, options); });
}
result<void> client::try_delete_code_contexts(std::string_view sandbox_id, std::string_view language,
                                              const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_delete_code_contexts(sandbox_id, language, options); });
}
result<code_result> client::try_run_code(std::string_view sandbox_id, const code_run& run,
                                         const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return run_code_operation(*state_, std::string(sandbox_id), run, options); });
}
result<void> client::try_interrupt_code(std::string_view sandbox_id, std::string_view context_id,
                                        const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_interrupt_code(sandbox_id, context_id, options); });
}
result<std::string> client::try_create_session(std::string_view sandbox_id, std::optional<std::string> cwd,
                                               const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_create_session(sandbox_id, cwd, options); });
}
result<exec_result> client::try_run_in_session(std::string_view sandbox_id, std::string_view session_id,
                                               const command& cmd, const call_options& options) noexcept {
    return run_blocking(*state_, [&] {
        return run_in_session_operation(*state_, std::string(sandbox_id), std::string(session_id), cmd, options);
    });
}
result<void> client::try_delete_session(std::string_view sandbox_id, std::string_view session_id,
                                        const call_options& options) noexcept {
    return run_blocking(*state_, [&] { return async_delete_session(sandbox_id, session_id, options); });
}

// ---- throwing: the same calls, raised with their causes nested ------------------------------

sandbox_info client::create(const create_request& request, const call_options& options) {
    return try_create(request, options).value();
}
sandbox_info client::get(std::string_view sandbox_id, const call_options& options) {
    return try_get(sandbox_id, options).value();
}
void client::kill(std::string_view sandbox_id, const call_options& options) { try_kill(sandbox_id, options).value(); }
std::string client::renew(std::string_view sandbox_id, std::string_view expires_at, const call_options& options) {
    return try_renew(sandbox_id, expires_at, options).value();
}
endpoint_info client::endpoint(std::string_view sandbox_id, int port, const call_options& options) {
    return try_endpoint(sandbox_id, port, options).value();
}
exec_result client::exec(std::string_view sandbox_id, const command& cmd, const call_options& options) {
    return try_exec(sandbox_id, cmd, options).value();
}
command_status client::exec_status(std::string_view sandbox_id, std::string_view execution_id,
                                   const call_options& options) {
    return try_exec_status(sandbox_id, execution_id, options).value();
}
void client::ping(std::string_view sandbox_id, const call_options& options) { try_ping(sandbox_id, options).value(); }
std::vector<sandbox_info> client::list(const list_request& request, const call_options& options) {
    return try_list(request, options).value();
}
void client::pause(std::string_view sandbox_id, const call_options& options) { try_pause(sandbox_id, options).value(); }
void client::resume(std::string_view sandbox_id, const call_options& options) { try_resume(sandbox_id, options).value(); }
command_logs client::exec_logs(std::string_view sandbox_id, std::string_view execution_id, std::size_t cursor,
                               const call_options& options) {
    return try_exec_logs(sandbox_id, execution_id, cursor, options).value();
}
void client::interrupt(std::string_view sandbox_id, std::string_view execution_id, const call_options& options) {
    try_interrupt(sandbox_id, execution_id, options).value();
}
void client::upload(std::string_view sandbox_id, std::string_view path, std::string_view content,
                    const call_options& options) {
    try_upload(sandbox_id, path, content, options).value();
}
std::string client::download(std::string_view sandbox_id, std::string_view path, const call_options& options) {
    return try_download(sandbox_id, path, options).value();
}
std::string client::download_range(std::string_view sandbox_id, std::string_view path, std::uint64_t first,
                                   std::optional<std::uint64_t> last, const call_options& options) {
    return try_download_range(sandbox_id, path, first, last, options).value();
}
std::string client::read_lines(std::string_view sandbox_id, std::string_view path, std::int64_t first_line,
                               std::optional<std::int64_t> max_lines, const call_options& options) {
    return try_read_lines(sandbox_id, path, first_line, max_lines, options).value();
}
std::map<std::string, entry_info> client::file_info(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                                    const call_options& options) {
    return try_file_info(sandbox_id, paths, options).value();
}
void client::delete_files(std::string_view sandbox_id, const std::vector<std::string>& paths,
                          const call_options& options) {
    try_delete_files(sandbox_id, paths, options).value();
}
std::vector<entry_info> client::list_directory(std::string_view sandbox_id, std::string_view path, int depth,
                                               const call_options& options) {
    return try_list_directory(sandbox_id, path, depth, options).value();
}
void client::create_directories(std::string_view sandbox_id, const std::vector<std::string>& paths, int mode,
                                const call_options& options) {
    try_create_directories(sandbox_id, paths, mode, options).value();
}
void client::delete_directories(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                const call_options& options) {
    try_delete_directories(sandbox_id, paths, options).value();
}
void client::move_files(std::string_view sandbox_id, const std::vector<file_move>& moves, const call_options& options) {
    try_move_files(sandbox_id, moves, options).value();
}
void client::set_permissions(std::string_view sandbox_id, const std::map<std::string, file_permissions>& permissions,
                             const call_options& options) {
    try_set_permissions(sandbox_id, permissions, options).value();
}
std::vector<entry_info> client::search_files(std::string_view sandbox_id, std::string_view path,
                                             std::string_view pattern, const call_options& options) {
    return try_search_files(sandbox_id, path, pattern, options).value();
}
sandbox_info client::patch_metadata(std::string_view sandbox_id, const metadata_patch& patch,
                                    const call_options& options) {
    return try_patch_metadata(sandbox_id, patch, options).value();
}
metrics_sample client::get_metrics(std::string_view sandbox_id, const call_options& options) {
    return try_get_metrics(sandbox_id, options).value();
}
std::size_t client::watch_metrics(std::string_view sandbox_id, const metrics_callback& on_sample,
                                  const call_options& options) {
    return try_watch_metrics(sandbox_id, on_sample, options).value();
}
snapshot_info client::create_snapshot(std::string_view sandbox_id, std::optional<std::string> name,
                                      const call_options& options) {
    return try_create_snapshot(sandbox_id, std::move(name), options).value();
}
snapshot_info client::get_snapshot(std::string_view snapshot_id, const call_options& options) {
    return try_get_snapshot(snapshot_id, options).value();
}
std::vector<snapshot_info> client::list_snapshots(const snapshot_list_request& request, const call_options& options) {
    return try_list_snapshots(request, options).value();
}
void client::delete_snapshot(std::string_view snapshot_id, const call_options& options) {
    try_delete_snapshot(snapshot_id, options).value();
}
std::map<std::string, std::int64_t> client::replace_contents(std::string_view sandbox_id,
                                                            const std::map<std::string, content_replacement>& replacements,
                                                            const call_options& options) {
    return try_replace_contents(sandbox_id, replacements, options).value();
}
code_context_info client::create_code_context(std::string_view sandbox_id, std::string_view language,
                                               std::optional<std::string> cwd, const call_options& options) {
    return try_create_code_context(sandbox_id, language, std::move(cwd), options).value();
}
code_context_info client::get_code_context(std::string_view sandbox_id, std::string_view context_id,
                                            const call_options& options) {
    return try_get_code_context(sandbox_id, context_id, options).value();
}
std::vector<code_context_info> client::list_code_contexts(std::string_view sandbox_id, std::string_view language,
                                                          const call_options& options) {
    return try_list_code_contexts(sandbox_id, language, options).value();
}
void client::delete_code_context(std::string_view sandbox_id, std::string_view context_id,
                                 const call_options& options) {
    try_delete_code_context(sandbox_id, context_id, options).value();
}
void client::delete_code_contexts(std::string_view sandbox_id, std::string_view language,
                                  const call_options& options) {
    try_delete_code_contexts(sandbox_id, language, options).value();
}
code_result client::run_code(std::string_view sandbox_id, const code_run& run, const call_options& options) {
    return try_run_code(sandbox_id, run, options).value();
}
void client::interrupt_code(std::string_view sandbox_id, std::string_view context_id, const call_options& options) {
    try_interrupt_code(sandbox_id, context_id, options).value();
}
std::string client::create_session(std::string_view sandbox_id, std::optional<std::string> cwd,
                                   const call_options& options) {
    return try_create_session(sandbox_id, std::move(cwd), options).value();
}
exec_result client::run_in_session(std::string_view sandbox_id, std::string_view session_id, const command& cmd,
                                   const call_options& options) {
    return try_run_in_session(sandbox_id, session_id, cmd, options).value();
}
void client::delete_session(std::string_view sandbox_id, std::string_view session_id, const call_options& options) {
    try_delete_session(sandbox_id, session_id, options).value();
}

}  // namespace ngfail::opensandbox
