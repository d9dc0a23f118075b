/* Hook picker: picking a hook shows its params schema and fills the params with its defaults. */
'use strict';
{
    // What the page says of each registered hook, once for all its pickers (admin_forms.hook_picker).
    let registered = null;
    function hooks() {
        if (!registered) {
            const data = document.getElementById('stash-hook-picker');
            registered = new Map(data ? JSON.parse(data.textContent).map((hook) => [hook.name, hook]) : []);
        }
        return registered;
    }

    const same = (a, b) => {
        try {
            return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
        } catch (error) {
            return false;
        }
    };

    // A row of the hooks table lists only its own hook: list them all, in the page's order, between
    // the empty choice and a hook no longer registered. The empty row that "Add another" copies
    // gets them too.
    function listChoices(select) {
        const chosen = select.value;
        const blank = [...select.options].filter((option) => !option.value);
        const gone = [...select.options].filter((option) => option.value && !hooks().has(option.value));
        const listed = [...hooks().values()].map(
            (hook) => new Option(hook.label, hook.name, hook.name === chosen, hook.name === chosen));
        select.replaceChildren(...blank, ...listed, ...gone);
        select.value = chosen;
    }

    function helpBox(select) {
        // Below the field: after the admin's label-and-field row, or the select in a table cell.
        const anchor = select.closest('.flex-container') || select;
        let box = anchor.parentElement.querySelector('.stash-hook-help');
        if (!box) {
            box = document.createElement('div');
            box.className = 'stash-hook-help';
            anchor.after(box);
        }
        return box;
    }

    function folded(title, content, open) {
        const details = document.createElement('details');
        details.open = open;
        const summary = document.createElement('summary');
        summary.textContent = title;
        details.append(summary, ...content);
        return details;
    }

    // Text only (textContent): nothing from a hook's schema is ever read as HTML.
    function show(select) {
        const option = select.selectedOptions[0];
        const box = helpBox(select);
        box.replaceChildren();
        if (!option || !option.value) return;
        const hook = hooks().get(option.value);
        if (!hook) {  // a hook no longer registered: say so
            box.textContent = option.dataset.description || '';
            return;
        }
        const params = document.createElement('div');
        params.className = 'stash-params';
        params.textContent = hook.params;
        const schema = document.createElement('pre');
        schema.textContent = hook.schema;
        // Open on the hook's own page, folded in the stash's table of hooks.
        box.append(folded('params schema', [params, folded('JSON Schema', [schema], false)],
                          !select.closest('.tabular')));
    }

    // Replace the params only while they are empty or still the previous hook's defaults.
    function fill(select, previous) {
        const params = document.getElementById(select.id.replace(/hook$/, 'params'));
        const hook = hooks().get(select.value);
        if (!params || !hook) return;
        const current = params.value.trim();
        const before = previous === undefined ? null : (hooks().get(previous) || {defaults: '{}'});
        if (!current || current === '{}' || (before && same(current, before.defaults))) {
            params.value = hook.defaults;
        }
    }

    document.addEventListener('change', (event) => {
        const select = event.target;
        if (!(select instanceof HTMLSelectElement) || !select.hasAttribute('data-hook-picker')) return;
        fill(select, select.dataset.previous);
        show(select);
        select.dataset.previous = select.value;
    });

    document.addEventListener('DOMContentLoaded', () => {
        document.querySelectorAll('select[data-hook-choices=page]').forEach(listChoices);
    });

    window.addEventListener('load', () => {
        document.querySelectorAll('select[data-hook-picker]').forEach((select) => {
            if (select.closest('.empty-form')) return;
            select.dataset.previous = select.value;
            show(select);
        });
    });
}
