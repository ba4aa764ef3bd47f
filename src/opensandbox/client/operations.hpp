// Every operation of the client, once: a coroutine that takes its arguments by value (so an
// awaitable may outlive the caller's), runs on the client's state and never throws. The
// three faces in client.cpp are each one line over these.
#pragma once

#include "call.hpp"

namespace ngfail::opensandbox::detail {

// lifecycle.cpp
awaitable<result<sandbox_info>> create_operation(client_state& s, create_request request, call_options per_call);
awaitable<result<sandbox_info>> get_operation(client_state& s, std::string sandbox_id, call_options per_call);
awaitable<result<void>> kill_operation(client_state& s, std::string sandbox_id, call_options per_call);
awaitable<result<std::string>> renew_operation(client_state& s, std::string sandbox_id, std::string expires_at,
                                               call_options per_call);
awaitable<result<endpoint_info>> endpoint_operation(client_state& s, std::string sandbox_id, int port,
                                                    call_options per_call);
awaitable<result<std::vector<sandbox_info>>> list_operation(client_state& s, list_request request,
                                                            call_options per_call);
awaitable<result<void>> pause_operation(client_state& s, std::string sandbox_id, call_options per_call);
awaitable<result<void>> resume_operation(client_state& s, std::string sandbox_id, call_options per_call);
awaitable<result<sandbox_info>> patch_metadata_operation(client_state& s, std::string sandbox_id, metadata_patch patch,
                                                         call_options per_call);

// metrics.cpp
awaitable<result<metrics_sample>> get_metrics_operation(client_state& s, std::string sandbox_id, call_options per_call);
awaitable<result<std::size_t>> watch_metrics_operation(client_state& s, std::string sandbox_id,
                                                       metrics_callback on_sample, call_options per_call);

// snapshots.cpp
awaitable<result<snapshot_info>> create_snapshot_operation(client_state& s, std::string sandbox_id,
                                                           std::optional<std::string> name, call_options per_call);
awaitable<result<snapshot_info>> get_snapshot_operation(client_state& s, std::string snapshot_id,
                                                        call_options per_call);
awaitable<result<std::vector<snapshot_info>>> list_snapshots_operation(client_state& s, snapshot_list_request request,
                                                                       call_options per_call);
awaitable<result<void>> delete_snapshot_operation(client_state& s, std::string snapshot_id, call_options per_call);

// commands.cpp
awaitable<result<exec_result>> exec_operation(client_state& s, std::string sandbox_id, command cmd,
                                              call_options per_call);
awaitable<result<command_status>> exec_status_operation(client_state& s, std::string sandbox_id,
                                                        std::string execution_id, call_options per_call);
awaitable<result<std::string>> create_session_operation(client_state& s, std::string sandbox_id,
                                                        std::optional<std::string> cwd, call_options per_call);
awaitable<result<exec_result>> run_in_session_operation(client_state& s, std::string sandbox_id,
                                                        std::string session_id, command cmd, call_options per_call);
awaitable<result<void>> delete_session_operation(client_state& s, std::string sandbox_id, std::string session_id,
                                                 call_options per_call);
awaitable<result<void>> ping_operation(client_state& s, std::string sandbox_id, call_options per_call);
awaitable<result<command_logs>> exec_logs_operation(client_state& s, std::string sandbox_id,
                                                    std::string execution_id, std::size_t cursor,
                                                    call_options per_call);
awaitable<result<void>> interrupt_operation(client_state& s, std::string sandbox_id, std::string execution_id,
                                            call_options per_call);
awaitable<result<code_result>> run_code_operation(client_state& s, std::string sandbox_id, code_run run,
                                                  call_options per_call);

// code.cpp
awaitable<result<code_context_info>> create_code_context_operation(client_state& s, std::string sandbox_id,
                                                                   std::string language,
                                                                   std::optional<std::string> cwd,
                                                                   call_options per_call);
awaitable<result<code_context_info>> get_code_context_operation(client_state& s, std::string sandbox_id,
                                                                std::string context_id, call_options per_call);
awaitable<result<std::vector<code_context_info>>> list_code_contexts_operation(client_state& s,
                                                                               std::string sandbox_id,
                                                                               std::string language,
                                                                               call_options per_call);
awaitable<result<void>> delete_code_context_operation(client_state& s, std::string sandbox_id,
                                                      std::string context_id, call_options per_call);
awaitable<result<void>> delete_code_contexts_operation(client_state& s, std::string sandbox_id,
                                                       std::string language, call_options per_call);
awaitable<result<void>> interrupt_code_operation(client_state& s, std::string sandbox_id, std::string context_id,
                                                 call_options per_call);

// files.cpp
awaitable<result<void>> upload_operation(client_state& s, std::string sandbox_id, std::string path,
                                         std::string content, call_options per_call);
awaitable<result<std::string>> download_operation(client_state& s, std::string sandbox_id, std::string path,
                                                  call_options per_call);
awaitable<result<std::string>> download_range_operation(client_state& s, std::string sandbox_id, std::string path,
                                                        std::uint64_t first, std::optional<std::uint64_t> last,
                                                        call_options per_call);
awaitable<result<std::string>> read_lines_operation(client_state& s, std::string sandbox_id, std::string path,
                                                    std::int64_t first_line, std::optional<std::int64_t> max_lines,
                                                    call_options per_call);
awaitable<result<std::map<std::string, entry_info>>> file_info_operation(client_state& s, std::string sandbox_id,
                                                                         std::vector<std::string> paths,
                                                                         call_options per_call);
awaitable<result<void>> delete_files_operation(client_state& s, std::string sandbox_id,
                                               std::vector<std::string> paths, call_options per_call);
awaitable<result<std::vector<entry_info>>> list_directory_operation(client_state& s, std::string sandbox_id,
                                                                    std::string path, int depth, call_options per_call);
awaitable<result<void>> create_directories_operation(client_state& s, std::string sandbox_id,
                                                     std::vector<std::string> paths, int mode, call_options per_call);
awaitable<result<void>> delete_directories_operation(client_state& s, std::string sandbox_id,
                                                     std::vector<std::string> paths, call_options per_call);
awaitable<result<void>> move_files_operation(client_state& s, std::string sandbox_id, std::vector<file_move> moves,
                                             call_options per_call);
awaitable<result<void>> set_permissions_operation(client_state& s, std::string sandbox_id,
                                                  std::map<std::string, file_permissions> permissions,
                                                  call_options per_call);
awaitable<result<std::vector<entry_info>>> search_files_operation(client_state& s, std::string sandbox_id,
                                                                  std::string path, std::string pattern,
                                                                  call_options per_call);
awaitable<result<std::map<std::string, std::int64_t>>> replace_contents_operation(
    client_state& s, std::string sandbox_id, std::map<std::string, content_replacement> replacements,
    call_options per_call);

}  // namespace ngfail::opensandbox::detail
