#include <ngfail/opensandbox/operation.hpp>

#include <array>
#include <cstdint>

namespace ngfail::opensandbox {
namespace {

using enum replay_policy;

// Index = enumerator value.
constexpr std::array<operation_traits, 45> table{{
    //  name           replay           command  creates  terminal
    {"create",      before_delivery, false,   true, false},
    {"get",         idempotent,      false,   false, false},
    {"list",        idempotent,      false,   false, false},
    {"kill",        before_delivery, false,   false, false},
    {"renew",       before_delivery, false,   false, false},
    {"pause",       before_delivery, false,   false, false},
    {"resume",      before_delivery, false,   false, false},
    {"endpoint",    idempotent,      false,   false, false},
    {"ping",        idempotent,      false,   false, false},
    {"exec",        before_delivery, true,    false, false},
    {"exec_status", idempotent,      true,    false, false},
    {"exec_logs",   idempotent,      false,   false, false},
    {"interrupt",   before_delivery, false,   false, false},
    {"upload",      before_delivery, false,   false, false},
    {"download",    idempotent,      false,   false, false},
    // execd makes these safe to repeat: a missing file or directory is no error to delete,
    // an existing one none to create (mkdir -p).
    {"file_info",          idempotent, false, false, false},
    {"delete_files",       idempotent, false, false, false},
    {"list_directory",     idempotent, false, false, false},
    {"create_directories", idempotent, false, false, false},
    {"delete_directories", idempotent, false, false, false},
    // A bash session's run streams as exec does and is read by exec's rules.
    {"create_session",     before_delivery, false, false, false},
    {"run_in_session",     before_delivery, true,  false, false},
    {"delete_session",     before_delivery, false, false, false},
    // A second move finds its source gone, and a second replacement replaces again;
    // setting the same permissions twice and searching change nothing more.
    {"move_files",         before_delivery, false, false, false},
    {"set_permissions",    idempotent,      false, false, false},
    {"search_files",       idempotent,      false, false, false},
    {"replace_contents",   before_delivery, false, false, false},
    // a snapshot's creation starts work on the server; deleting it is a change, as kill is
    {"create_snapshot",    before_delivery, false, false, false},
    {"get_snapshot",       idempotent,      false, false, false},
    {"list_snapshots",     idempotent,      false, false, false},
    {"delete_snapshot",    before_delivery, false, false, false},
    {"metrics",            idempotent,      false, false, false},
    {"watch_metrics",      idempotent,      false, false, false},
    // a merge patch is idempotent in itself, but the server takes no version: a repeat could
    // undo another writer's change that came between
    {"metadata",           before_delivery, false, false, false},
    // A code run streams as exec does and is read by exec's rules; a second interrupt could
    // stop the run that came after the first.
    {"create_code_context",  before_delivery, false, false, false},
    {"get_code_context",     idempotent,      false, false, false},
    {"list_code_contexts",   idempotent,      false, false, false},
    {"delete_code_context",  before_delivery, false, false, false},
    {"delete_code_contexts", before_delivery, false, false, false},
    {"run_code",             before_delivery, true,  false, false},
    {"interrupt_code",       before_delivery, false, false, false},
    // Attaching starts the shell (and a takeover evicts the holder): not repeated once sent.
    {"create_terminal",      before_delivery, false, false, true},
    {"terminal_status",      idempotent,      false, false, true},
    {"delete_terminal",      before_delivery, false, false, true},
    {"attach_terminal",      before_delivery, false, false, true},
}};

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
