#include <ngfail/opensandbox/operation.hpp>

#include <array>
#include <cstdint>

namespace ngfail::opensandbox {
namespace {

using enum replay_policy;

// Each row keyed by its enumerator, checked below to stand at the enumerator's index: a
// row moved, missed or added twice does not compile.
struct keyed_row {
    operation op;
    operation_traits traits;
};
constexpr std::array<keyed_row, operation_count> rows{{
    //  operation                 wire name                replay           command creates terminal
    {operation::create,               {"create",              before_delivery, false, true,  false}},
    {operation::get,                  {"get",                 idempotent,      false, false, false}},
    {operation::list,                 {"list",                idempotent,      false, false, false}},
    // a repeated kill is answered 404 SANDBOX_NOT_FOUND, which the client reads as done
    {operation::kill,                 {"kill",                idempotent,      false, false, false}},
    {operation::renew,                {"renew",               before_delivery, false, false, false}},
    {operation::pause,                {"pause",               before_delivery, false, false, false}},
    {operation::resume,               {"resume",              before_delivery, false, false, false}},
    {operation::endpoint,             {"endpoint",            idempotent,      false, false, false}},
    {operation::ping,                 {"ping",                idempotent,      false, false, false}},
    {operation::exec,                 {"exec",                before_delivery, true,  false, false}},
    {operation::exec_status,          {"exec_status",         idempotent,      true,  false, false}},
    {operation::exec_logs,            {"exec_logs",           idempotent,      false, false, false}},
    {operation::interrupt,            {"interrupt",           before_delivery, false, false, false}},
    {operation::upload,               {"upload",              before_delivery, false, false, false}},
    {operation::download,             {"download",            idempotent,      false, false, false}},
    // execd makes these safe to repeat: a missing file or directory is no error to delete,
    // an existing one none to create (mkdir -p).
    {operation::file_info,            {"file_info",           idempotent,      false, false, false}},
    {operation::delete_files,         {"delete_files",        idempotent,      false, false, false}},
    {operation::list_directory,       {"list_directory",      idempotent,      false, false, false}},
    {operation::create_directories,   {"create_directories",  idempotent,      false, false, false}},
    {operation::delete_directories,   {"delete_directories",  idempotent,      false, false, false}},
    // A bash session's run streams as exec does and is read by exec's rules.
    {operation::create_session,       {"create_session",      before_delivery, false, false, false}},
    {operation::run_in_session,       {"run_in_session",      before_delivery, true,  false, false}},
    {operation::delete_session,       {"delete_session",      before_delivery, false, false, false}},
    // A second move finds its source gone, and a second replacement replaces again;
    // setting the same permissions twice and searching change nothing more.
    {operation::move_files,           {"move_files",          before_delivery, false, false, false}},
    {operation::set_permissions,      {"set_permissions",     idempotent,      false, false, false}},
    {operation::search_files,         {"search_files",        idempotent,      false, false, false}},
    {operation::replace_contents,     {"replace_contents",    before_delivery, false, false, false}},
    // a snapshot's creation starts work on the server; deleting it is a change, as kill is
    {operation::create_snapshot,      {"create_snapshot",     before_delivery, false, false, false}},
    {operation::get_snapshot,         {"get_snapshot",        idempotent,      false, false, false}},
    {operation::list_snapshots,       {"list_snapshots",      idempotent,      false, false, false}},
    {operation::delete_snapshot,      {"delete_snapshot",     before_delivery, false, false, false}},
    {operation::metrics,              {"metrics",             idempotent,      false, false, false}},
    {operation::watch_metrics,        {"watch_metrics",       idempotent,      false, false, false}},
    // a merge patch is idempotent in itself, but the server takes no version: a repeat could
    // undo another writer's change that came between
    {operation::metadata,             {"metadata",            before_delivery, false, false, false}},
    // A code run streams as exec does and is read by exec's rules; a second interrupt could
    // stop the run that came after the first.
    {operation::create_code_context,  {"create_code_context", before_delivery, false, false, false}},
    {operation::get_code_context,     {"get_code_context",    idempotent,      false, false, false}},
    {operation::list_code_contexts,   {"list_code_contexts",  idempotent,      false, false, false}},
    {operation::delete_code_context,  {"delete_code_context", before_delivery, false, false, false}},
    {operation::delete_code_contexts, {"delete_code_contexts",before_delivery, false, false, false}},
    {operation::run_code,             {"run_code",            before_delivery, true,  false, false}},
    {operation::interrupt_code,       {"interrupt_code",      before_delivery, false, false, false}},
    // Attaching starts the shell (and a takeover evicts the holder): not repeated once sent.
    {operation::create_terminal,      {"create_terminal",     before_delivery, false, false, true}},
    {operation::terminal_status,      {"terminal_status",     idempotent,      false, false, true}},
    {operation::delete_terminal,      {"delete_terminal",     before_delivery, false, false, true}},
    {operation::attach_terminal,      {"attach_terminal",     before_delivery, false, false, true}},
    {operation::diagnostic_logs,      {"diagnostic_logs",     idempotent,      false, false, false}},
    {operation::diagnostic_events,    {"diagnostic_events",   idempotent,      false, false, false}},
}};

constexpr bool keyed_in_order() {
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (static_cast<std::size_t>(rows[i].op) != i) return false;
    }
    return true;
}
static_assert(keyed_in_order(), "each operation's row stands at its enumerator's index");

constexpr auto table = [] {
    std::array<operation_traits, operation_count> out{};
    for (std::size_t i = 0; i < rows.size(); ++i) out[i] = rows[i].traits;
    return out;
}();

constexpr auto operations = [] {
    std::array<operation, table.size()> all{};
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<operation>(i);
    return all;
}();

// Wire name -> operation through a hash table built at compile time (FNV-1a, linear
// probing): classify parses the name of every observation, and a walk over 45 names was a
// third of its time.
constexpr std::uint32_t hash_of(std::string_view name) noexcept {
    std::uint32_t h = 2166136261u;
    for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    return h;
}

constexpr std::size_t slot_count = 128;  // a power of two over twice the names
constexpr unsigned char empty_slot = 0xff;
static_assert(table.size() * 2 <= slot_count && table.size() < empty_slot);

constexpr auto slots = [] {
    std::array<unsigned char, slot_count> at{};
    at.fill(empty_slot);
    for (std::size_t i = 0; i < table.size(); ++i) {
        std::size_t s = hash_of(table[i].name) % slot_count;
        while (at[s] != empty_slot) s = (s + 1) % slot_count;
        at[s] = static_cast<unsigned char>(i);
    }
    return at;
}();

}  // namespace

std::span<const operation> all_operations() noexcept { return operations; }

const operation_traits& traits(operation op) noexcept { return table[static_cast<std::size_t>(op)]; }

std::optional<operation> parse_operation(std::string_view name) noexcept {
    for (std::size_t s = hash_of(name) % slot_count; slots[s] != empty_slot; s = (s + 1) % slot_count) {
        if (table[slots[s]].name == name) return static_cast<operation>(slots[s]);
    }
    return std::nullopt;
}

}  // namespace ngfail::opensandbox
